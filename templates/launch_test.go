package templates

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"

	"github.com/beamthrottle/beamthrottle/pipeline"
)

// launchCase is a launch of a template with the documented example of every
// parameter but those in drop.
type launchCase struct {
	name, file string
	drop       []string // parameters left out: sources exclude each other
	wantType   string   // Dataflow job type
}

var launchCases = []launchCase{
	{"main/files", "metadata.json", []string{"subscription", "generate", "idle_timeout"}, "JOB_TYPE_BATCH"},
	{"main/subscription", "metadata.json", []string{"input", "generate"}, "JOB_TYPE_STREAMING"},
	{"replay", "metadata-replay.json", nil, "JOB_TYPE_STREAMING"},
}

// exampleArgs returns the launch's parameters as the launcher passes them,
// --name=value, from the documented examples.
func exampleArgs(t *testing.T, file string, drop []string) []string {
	t.Helper()
	var args []string
	for _, p := range readMetadata(t, file).Parameters {
		if slices.Contains(drop, p.Name) {
			continue
		}
		v, ok := p.example()
		if !ok {
			t.Fatalf("%s: parameter %q documents no example", file, p.Name)
		}
		args = append(args, "--"+p.Name+"="+v)
	}
	return args
}

// requiredParams returns the names of the file's required parameters.
func requiredParams(t *testing.T, file string) []string {
	t.Helper()
	var names []string
	for _, p := range readMetadata(t, file).Parameters {
		if p.IsOptional != nil && !*p.IsOptional {
			names = append(names, p.Name)
		}
	}
	return names
}

// captureLogger collects Beam's log messages.
type captureLogger struct {
	mu   sync.Mutex
	msgs []string
}

func (l *captureLogger) Log(_ context.Context, _ log.Severity, _ int, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, msg)
}

// dataflowJob is the part of a Dataflow job (v1b3 JSON) the tests look at.
type dataflowJob struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Environment struct {
		WorkerPools []struct {
			Packages []struct {
				Location string `json:"location"`
			} `json:"packages"`
		} `json:"workerPools"`
	} `json:"environment"`
}

// setFlags sets process-wide (Beam) flags and returns a func restoring them.
func setFlags(t *testing.T, values map[string]string) func() {
	t.Helper()
	old := map[string]string{}
	for name, v := range values {
		f := flag.Lookup(name)
		if f == nil {
			t.Fatalf("no flag --%s", name)
		}
		old[name] = f.Value.String()
		if err := flag.Set(name, v); err != nil {
			t.Fatalf("--%s=%s: %v", name, v, err)
		}
	}
	return func() {
		for name, v := range old {
			flag.Set(name, v)
		}
	}
}

// TestDataflowDryRun builds each template's pipeline from the documented
// examples with pipeline.Build and translates it into a Dataflow job with
// the Dataflow runner's --dry_run, which submits nothing.
func TestDataflowDryRun(t *testing.T) {
	fake := newFakeGoogle(t) // the runner checks the staging bucket: keep it on loopback
	t.Setenv("STORAGE_EMULATOR_HOST", fake.Listener.Addr().String())
	t.Setenv("GCE_METADATA_HOST", fake.Listener.Addr().String())
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	defer setFlags(t, map[string]string{
		"project":          "my-project",
		"region":           "us-central1",
		"staging_location": "gs://my-bucket/staging",
		"temp_location":    "gs://my-bucket/temp",
		"dry_run":          "true",
	})()
	logs := &captureLogger{}
	log.SetLogger(logs)
	defer log.SetLogger(&log.Structural{})

	for _, tc := range launchCases {
		t.Run(tc.name, func(t *testing.T) {
			fs, opts := pipelineFlags()
			args := exampleArgs(t, tc.file, tc.drop)
			if err := fs.Parse(args); err != nil {
				t.Fatalf("flags %q: %v", args, err)
			}
			if err := opts.Validate(); err != nil {
				t.Fatalf("Validate with the examples of %s: %v", tc.file, err)
			}
			p, s := beam.NewPipelineWithRoot()
			if _, err := pipeline.Build(s, *opts); err != nil {
				t.Fatalf("pipeline.Build: %v", err)
			}
			logs.mu.Lock()
			logs.msgs = nil
			logs.mu.Unlock()
			if _, err := beam.Run(context.Background(), "dataflow", p); err != nil {
				t.Fatalf("dataflow --dry_run: %v", err)
			}
			fake.checkUnexpected(t)
			job, ok := loggedJob(logs)
			if !ok {
				t.Fatalf("dataflow --dry_run logged no job; log:\n%s", strings.Join(logs.msgs, "\n"))
			}
			if job.Type != tc.wantType {
				t.Errorf("got job type %s, want %s", job.Type, tc.wantType)
			}
		})
	}
}

// modeSwitches are required parameters that select a mode: without them the
// other parameters make a valid launch of another pipeline, so the template
// requires them (with a regex allowing the one value) rather than Validate.
var modeSwitches = map[string]bool{"reprocess": true}

// TestRequiredParameters checks that each required parameter is needed:
// without it, the example launch does not validate.
func TestRequiredParameters(t *testing.T) {
	for _, tc := range launchCases {
		for _, name := range requiredParams(t, tc.file) {
			if modeSwitches[name] {
				continue
			}
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				fs, opts := pipelineFlags()
				if err := fs.Parse(exampleArgs(t, tc.file, append(slices.Clone(tc.drop), name))); err != nil {
					t.Fatal(err)
				}
				if err := opts.Validate(); err == nil {
					t.Errorf("got a valid launch without required parameter %q, want an error (or make it optional)", name)
				}
			})
		}
	}
}

// loggedJob finds the Dataflow job the runner logged (dataflowlib.PrintJob).
func loggedJob(l *captureLogger) (dataflowJob, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		var job dataflowJob
		if strings.HasPrefix(m, "{") && json.Unmarshal([]byte(m), &job) == nil && strings.HasPrefix(job.Type, "JOB_TYPE_") {
			return job, true
		}
	}
	return dataflowJob{}, false
}

// TestTemplateLaunch runs the image's entry point (launch.sh, with the
// binary built by binaryBuild) the way Google's Go launcher does: the
// template parameters and the launcher's own flags, sorted, no Go toolchain
// on the PATH. The Google APIs are a fake on loopback. With
// --template_location (what the launcher passes) the binary must stage the
// worker binary and write the job to that location; without it, it must
// submit the job and return at once (--async). Either way it must exit 0.
func TestTemplateLaunch(t *testing.T) {
	l := newLauncher(t)
	bin := templateBinary(t)
	binHash, err := fileSHA256(bin)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		launch   string // name of a launchCase
		template bool   // pass --template_location, as the launcher does
	}{
		{"main/subscription", true},
		{"replay", true},
		{"main/files", false},
	} {
		i := slices.IndexFunc(launchCases, func(c launchCase) bool { return c.name == tc.launch })
		lc := launchCases[i]
		name := lc.name + "/submit"
		if tc.template {
			name = lc.name + "/template_location"
		}
		t.Run(name, func(t *testing.T) {
			fake := newFakeGoogle(t)
			fake.put("my-bucket/requests/batch-1.jsonl", []byte("{\"id\":1}\n")) // the files example's input
			jobName := "beamthrottle-test-" + strings.ReplaceAll(lc.name, "/", "-")
			args := append(exampleArgs(t, lc.file, lc.drop), launcherFlags(jobName)...)
			const templateObject = "my-bucket/staging/template_launches/2026-01-01_00_00_00-1/job_object"
			if tc.template {
				args = append(args, "--template_location=gs://"+templateObject)
			} else {
				args = append(args, "--dataflow_endpoint="+fake.URL+"/")
			}
			slices.Sort(args)

			out, err := l.run(fake, args)
			fake.checkUnexpected(t)
			if err != nil {
				t.Fatalf("launch.sh %s: got %v, want exit 0; output (tail):\n%s", strings.Join(args, " "), err, tail(out, 40))
			}

			var job dataflowJob
			if tc.template {
				b, ok := fake.object(templateObject)
				if !ok {
					t.Fatalf("no job written to gs://%s; output (tail):\n%s", templateObject, tail(out, 40))
				}
				if err := json.Unmarshal(b, &job); err != nil {
					t.Fatalf("job at gs://%s: %v", templateObject, err)
				}
			} else {
				jobs := fake.submitted()
				if len(jobs) != 1 {
					t.Fatalf("got %d jobs submitted, want 1; output (tail):\n%s", len(jobs), tail(out, 40))
				}
				job = jobs[0]
			}
			if job.Name != jobName || job.Type != lc.wantType {
				t.Errorf("got job %q of type %s, want %q of type %s", job.Name, job.Type, jobName, lc.wantType)
			}
			// The staged worker binary is the launched binary itself.
			var worker string
			for _, wp := range job.Environment.WorkerPools {
				for _, pkg := range wp.Packages {
					worker = strings.TrimPrefix(pkg.Location, "gs://")
				}
			}
			b, ok := fake.object(worker)
			if !ok {
				t.Fatalf("worker package gs://%s was not staged", worker)
			}
			if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != binHash {
				t.Errorf("staged worker binary: got sha256 %s, want %s (the template's binary)", got, binHash)
			}
		})
	}
}

// launcherFlags are the flags Google's launcher adds to the parameters.
func launcherFlags(jobName string) []string {
	return []string{
		"--job_name=" + jobName,
		"--project=my-project",
		"--region=us-central1",
		"--runner=DataflowRunner",
		"--service_account_email=launcher@my-project.iam.gserviceaccount.com",
		"--staging_location=gs://my-bucket/staging",
		"--temp_location=gs://my-bucket/temp",
	}
}

// TestTemplateLaunchRefusesMissingInput: a launch whose input glob matches
// no object on Cloud Storage fails at start, naming the parameter, and
// submits no job.
func TestTemplateLaunchRefusesMissingInput(t *testing.T) {
	l := newLauncher(t)
	fake := newFakeGoogle(t)
	fake.put("my-bucket/requests/batch-1.jsonl", []byte("{\"id\":1}\n"))
	const glob = "gs://my-bucket/other/*.jsonl"
	var args []string
	for _, a := range exampleArgs(t, "metadata.json", []string{"subscription", "generate", "idle_timeout"}) {
		if strings.HasPrefix(a, "--input=") {
			a = "--input=" + glob
		}
		args = append(args, a)
	}
	args = append(args, launcherFlags("beamthrottle-test-missing-input")...)
	args = append(args, "--dataflow_endpoint="+fake.URL+"/")
	slices.Sort(args)

	out, err := l.run(fake, args)
	fake.checkUnexpected(t)
	if err == nil {
		t.Errorf("launch.sh with --input=%s: got exit 0, want a failure", glob)
	}
	if want := `--input: no file matches "` + glob + `"`; !strings.Contains(out, want) {
		t.Errorf("output lacks %q; output (tail):\n%s", want, tail(out, 20))
	}
	if jobs := fake.submitted(); len(jobs) != 0 {
		t.Errorf("got %d jobs submitted, want none", len(jobs))
	}
}

// launcher runs launch.sh, the image's entry point, with the template's
// binary in place of /template/beamthrottle.
type launcher struct {
	sh, script, dir string
}

func newLauncher(t *testing.T) *launcher {
	t.Helper()
	bin := templateBinary(t)
	script, err := os.ReadFile("launch.sh")
	if err != nil {
		t.Fatal(err)
	}
	const imageBinary = "/template/beamthrottle"
	if !bytes.Contains(script, []byte(imageBinary)) {
		t.Fatalf("launch.sh does not mention %s", imageBinary)
	}
	l := &launcher{dir: t.TempDir()}
	l.script = filepath.Join(l.dir, "launch.sh")
	if err := os.WriteFile(l.script, bytes.ReplaceAll(script, []byte(imageBinary), []byte(bin)), 0o755); err != nil {
		t.Fatal(err)
	}
	if l.sh, err = exec.LookPath("sh"); err != nil {
		t.Fatal(err)
	}
	return l
}

// run runs launch.sh with args as the launcher would, against the fake
// Google APIs, and returns its output.
func (l *launcher) run(fake *fakeGoogle, args []string) (string, error) {
	cmd := exec.Command(l.sh, append([]string{l.script}, args...)...)
	cmd.Dir = l.dir
	cmd.Env = []string{
		"PATH=" + l.dir, // no Go toolchain, as in the launcher image
		"HOME=" + l.dir,
		"TMPDIR=" + l.dir,
		"CLOUDSDK_CONFIG=" + l.dir,
		"STORAGE_EMULATOR_HOST=" + fake.Listener.Addr().String(),
		"GCE_METADATA_HOST=" + fake.Listener.Addr().String(),
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func fileSHA256(name string) (string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", sha256.Sum256(b)), nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// fakeGoogle stands in, on loopback, for the Google APIs a Dataflow launch
// uses: Cloud Storage (STORAGE_EMULATOR_HOST; simple, multipart and
// resumable uploads), the GCE metadata server (GCE_METADATA_HOST, for
// credentials) and the Dataflow jobs API (--dataflow_endpoint).
type fakeGoogle struct {
	*httptest.Server
	mu         sync.Mutex
	objects    map[string][]byte // "bucket/object"
	sessions   map[string]*upload
	jobs       []dataflowJob
	unexpected []string
}

// upload is a resumable upload session.
type upload struct {
	bucket, name string
	data         []byte
}

func newFakeGoogle(t *testing.T) *fakeGoogle {
	f := &fakeGoogle{objects: map[string][]byte{}, sessions: map[string]*upload{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeGoogle) object(name string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.objects[name]
	return b, ok
}

func (f *fakeGoogle) submitted() []dataflowJob {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.jobs)
}

func (f *fakeGoogle) checkUnexpected(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.unexpected) > 0 {
		t.Errorf("unexpected requests to the fake Google APIs: %q", f.unexpected)
	}
}

func (f *fakeGoogle) serve(w http.ResponseWriter, r *http.Request) {
	p := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(p) >= 2 && p[0] == "computeMetadata":
		f.metadata(w, r, strings.Join(p[2:], "/"))
	case len(p) == 4 && p[0] == "storage" && p[2] == "b" && r.Method == http.MethodGet:
		writeJSON(w, map[string]string{"kind": "storage#bucket", "name": p[3], "id": p[3]})
	case len(p) == 5 && p[0] == "storage" && p[2] == "b" && p[4] == "o" && r.Method == http.MethodGet:
		f.list(w, p[3], r.URL.Query().Get("prefix"))
	case len(p) == 6 && p[0] == "upload" && p[3] == "b" && p[5] == "o" && r.Method == http.MethodPost:
		f.startUpload(w, r, p[4])
	case len(p) == 3 && p[0] == "upload" && p[1] == "resumable" && (r.Method == http.MethodPut || r.Method == http.MethodPost):
		f.continueUpload(w, r, p[2])
	case len(p) == 6 && p[0] == "v1b3" && p[5] == "jobs" && r.Method == http.MethodPost:
		var job dataflowJob
		raw := map[string]any{}
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &job) != nil || json.Unmarshal(b, &raw) != nil {
			http.Error(w, "bad job", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.jobs = append(f.jobs, job)
		f.mu.Unlock()
		raw["id"] = "2026-01-01_00_00_00-fake"
		raw["currentState"] = "JOB_STATE_QUEUED"
		writeJSON(w, raw)
	default:
		f.mu.Lock()
		f.unexpected = append(f.unexpected, r.Method+" "+r.URL.String())
		f.mu.Unlock()
		http.NotFound(w, r)
	}
}

func (f *fakeGoogle) metadata(w http.ResponseWriter, r *http.Request, key string) {
	if r.Header.Get("Metadata-Flavor") != "Google" {
		http.Error(w, "missing Metadata-Flavor", http.StatusForbidden)
		return
	}
	w.Header().Set("Metadata-Flavor", "Google")
	switch key {
	case "instance/service-accounts/default/token":
		writeJSON(w, map[string]any{"access_token": "fake-token", "expires_in": 3600, "token_type": "Bearer"})
	case "project/project-id":
		io.WriteString(w, "my-project")
	case "universe/universe-domain":
		io.WriteString(w, "googleapis.com")
	case "instance/service-accounts/default/email":
		io.WriteString(w, "launcher@my-project.iam.gserviceaccount.com")
	default:
		http.NotFound(w, r)
	}
}

// startUpload handles POST /upload/storage/v1/b/BUCKET/o.
func (f *fakeGoogle) startUpload(w http.ResponseWriter, r *http.Request, bucket string) {
	q := r.URL.Query()
	switch q.Get("uploadType") {
	case "media":
		b, _ := io.ReadAll(r.Body)
		f.store(w, bucket, q.Get("name"), b)
	case "multipart":
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		var meta struct {
			Name string `json:"name"`
		}
		part, err := mr.NextPart()
		if err == nil {
			err = json.NewDecoder(part).Decode(&meta)
		}
		if err == nil {
			part, err = mr.NextPart()
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(part)
		f.store(w, bucket, meta.Name, b)
	case "resumable":
		var meta struct {
			Name string `json:"name"`
		}
		json.NewDecoder(r.Body).Decode(&meta)
		if meta.Name == "" {
			meta.Name = q.Get("name")
		}
		f.mu.Lock()
		id := strconv.Itoa(len(f.sessions) + 1)
		f.sessions[id] = &upload{bucket: bucket, name: meta.Name}
		f.mu.Unlock()
		w.Header().Set("Location", f.URL+"/upload/resumable/"+id)
		w.WriteHeader(http.StatusOK)
	default:
		http.Error(w, "unknown uploadType", http.StatusBadRequest)
	}
}

// continueUpload handles a chunk of a resumable upload: Content-Range
// "bytes FIRST-LAST/TOTAL", "bytes FIRST-LAST/*" or "bytes */TOTAL".
func (f *fakeGoogle) continueUpload(w http.ResponseWriter, r *http.Request, id string) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	s, ok := f.sessions[id]
	if ok {
		s.data = append(s.data, b...)
	}
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, total, _ := strings.Cut(r.Header.Get("Content-Range"), "/")
	if n, err := strconv.Atoi(total); err == nil && n == len(s.data) {
		f.store(w, s.bucket, s.name, s.data)
		return
	}
	if len(s.data) > 0 {
		w.Header().Set("Range", fmt.Sprintf("bytes=0-%d", len(s.data)-1))
	}
	// 308: send more; as 200 with an override header if the client asks,
	// like Cloud Storage does.
	if r.Header.Get("X-GUploader-No-308") == "yes" {
		w.Header().Set("X-HTTP-Status-Code-Override", "308")
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusPermanentRedirect)
}

// put stores an object, as if uploaded before the launch.
func (f *fakeGoogle) put(name string, b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objects[name] = b
}

// list handles GET /storage/v1/b/BUCKET/o?prefix=P (one page).
func (f *fakeGoogle) list(w http.ResponseWriter, bucket, prefix string) {
	f.mu.Lock()
	var items []map[string]string
	for _, name := range slices.Sorted(maps.Keys(f.objects)) {
		if object, ok := strings.CutPrefix(name, bucket+"/"); ok && strings.HasPrefix(object, prefix) {
			items = append(items, map[string]string{"kind": "storage#object", "bucket": bucket, "name": object, "size": strconv.Itoa(len(f.objects[name]))})
		}
	}
	f.mu.Unlock()
	writeJSON(w, map[string]any{"kind": "storage#objects", "items": items})
}

func (f *fakeGoogle) store(w http.ResponseWriter, bucket, name string, b []byte) {
	f.mu.Lock()
	f.objects[bucket+"/"+name] = b
	f.mu.Unlock()
	writeJSON(w, map[string]string{"kind": "storage#object", "bucket": bucket, "name": name, "size": strconv.Itoa(len(b))})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
