// Live chart for the beamthrottle quota test server (served at GET /).
//
// Polls GET /stats, turns its sparse per-second series into one point per
// second over the last `window` seconds, and draws it with uPlot. After each
// draw it records what was drawn on <body> so that a headless browser test
// can check it:
//   data-points           seconds on the chart (x values drawn)
//   data-accepted, data-rejected, data-errors, data-client-throttled
//                         sums of each series over the drawn seconds
//   data-marks            marks (Handler.Mark, POST /mark) drawn as vertical lines
//   data-ready="true"     set once a draw with data from /stats has happened
//   data-error            the last polling error, removed after a success
"use strict";
(function () {
  const params = new URLSearchParams(location.search);
  const every = clamp(number(params.get("every"), 1), 0.2, 60); // seconds between polls
  const span = Math.round(clamp(number(params.get("window"), 300), 10, 3600)); // seconds shown
  const statsURL = new URL("stats", location.href);
  const body = document.body;
  const status = document.getElementById("status");
  const chartEl = document.getElementById("chart");
  document.getElementById("every").textContent = String(every);
  document.getElementById("span").textContent = String(span);

  // Keys of /stats series entries, in the order of the chart series.
  const keys = ["accepted", "rejected", "client_throttled", "errors"];
  const dataAttrs = ["accepted", "rejected", "clientThrottled", "errors"];
  let fromStats = false; // whether the chart holds data from /stats yet
  let marks = []; // the /stats marks: {t, label}

  const chart = new uPlot({
    width: chartWidth(),
    height: 400,
    scales: { x: { time: true } },
    series: [
      { label: "time" },
      { label: "accepted", stroke: "#2ca02c", fill: "rgba(44,160,44,0.08)", width: 2 },
      { label: "rejected (429/outage)", stroke: "#d62728", width: 2 },
      { label: "client-throttled", stroke: "#ff7f0e", width: 2, dash: [8, 4] },
      { label: "errors (500)", stroke: "#7f7f7f", width: 1 },
    ],
    axes: [{}, { label: "requests / s" }],
    hooks: { draw: [drawMarks, recordDrawn] },
  }, [[], [], [], [], []], chartEl);

  window.addEventListener("resize", () => chart.setSize({ width: chartWidth(), height: 400 }));

  // drawMarks draws each mark within the shown seconds as a dashed vertical
  // line with its label at the top, and counts those drawn on <body>.
  function drawMarks(u) {
    const ctx = u.ctx;
    const xs = u.data[0];
    let drawn = 0;
    ctx.save();
    ctx.strokeStyle = "#1f4e9c";
    ctx.fillStyle = "#1f4e9c";
    ctx.lineWidth = 1.5 * devicePixelRatio;
    ctx.setLineDash([4 * devicePixelRatio, 4 * devicePixelRatio]);
    ctx.font = `${12 * devicePixelRatio}px system-ui, sans-serif`;
    ctx.textBaseline = "top";
    for (const m of marks) {
      if (!xs.length || m.t < xs[0] || m.t > xs[xs.length - 1]) continue;
      const x = Math.round(u.valToPos(m.t, "x", true));
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      // Labels step down, so that those of close marks do not overlap.
      ctx.fillText(" " + m.label, x, u.bbox.top + (2 + 15 * (drawn % 3)) * devicePixelRatio);
      drawn++;
    }
    ctx.restore();
    body.dataset.marks = String(drawn);
  }

  // recordDrawn writes what the chart has just drawn onto <body>.
  function recordDrawn(u) {
    const n = u.data[0].length;
    body.dataset.points = String(n);
    for (let i = 0; i < dataAttrs.length; i++) {
      let sum = 0;
      for (const v of u.data[i + 1]) sum += v || 0;
      body.dataset[dataAttrs[i]] = String(sum);
    }
    if (fromStats && n > 0) body.dataset.ready = "true";
  }

  // frame turns a /stats response into uPlot data: x in Unix seconds, one
  // point per second, ending at the last second counted or, if that is
  // within the window, the last whole second by this browser's clock (so
  // the chart keeps scrolling while nothing is counted).
  function frame(stats) {
    const series = stats.series || [];
    const last = series.length ? series[series.length - 1].t : null;
    const now = Math.floor(Date.now() / 1000) - 1;
    let end = last === null ? now : last;
    if (now > end && now - end < span) end = now;
    const start = end - span + 1;
    const data = [Array.from({ length: span }, (_, i) => start + i)];
    for (const k of keys) data.push(new Array(span).fill(0));
    for (const s of series) {
      const i = s.t - start;
      if (i < 0 || i >= span) continue;
      keys.forEach((k, j) => { data[j + 1][i] = s[k] || 0; });
    }
    return data;
  }

  function describe(stats) {
    const burst = stats.burst > 1 ? `, burst ${stats.burst}` : "";
    const quota = stats.quota > 0 ? `quota ${stats.quota} per ${stats.period} (${stats.mode}${burst})` : "no quota";
    const outage = stats.outage ? `, outage: every request answered ${stats.outage}` : "";
    return `Totals since start or reset: accepted ${stats.accepted}, rejected ${stats.rejected}, ` +
      `errors ${stats.errors}, too large ${stats.too_large}, client-throttled ${stats.client_throttled}. ` +
      `Now: ${quota}${outage}. Updated ${new Date().toLocaleTimeString()}.`;
  }

  async function poll() {
    try {
      const res = await fetch(statsURL, { cache: "no-store" });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const stats = await res.json();
      fromStats = true;
      marks = stats.marks || [];
      chart.setData(frame(stats));
      status.textContent = describe(stats);
      status.className = "";
      delete body.dataset.error;
    } catch (err) {
      status.textContent = `Cannot read ${statsURL.pathname}: ${err.message}; retrying every ${every} s.`;
      status.className = "error";
      body.dataset.error = String(err.message);
    } finally {
      setTimeout(poll, every * 1000);
    }
  }

  function chartWidth() {
    return Math.max(320, chartEl.clientWidth || document.documentElement.clientWidth - 64);
  }

  function number(s, def) {
    const v = s === null ? NaN : Number(s);
    return Number.isFinite(v) ? v : def;
  }

  function clamp(v, lo, hi) {
    return Math.min(hi, Math.max(lo, v));
  }

  poll();
})();
