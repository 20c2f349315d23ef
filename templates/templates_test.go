package templates

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/pipeline"
)

// binaryBuild builds the template's binary from the repository root: a
// static linux/amd64 executable. The Dockerfile's build stage runs exactly
// this command, and so must `make template-binary` (with $(GO) for go).
const binaryBuild = "CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -o bin/beamthrottle ./cmd/beamthrottle"

// notParameters are the user-facing flags of the binary that no template
// offers, with the reason. A flag added later to pipeline's table of flags
// (which pipeline.RegisterFlags defines) or to cmd/beamthrottle must become
// a parameter of every template, or be listed
// here or in a template's own exclusions below. Beam's own flags (--runner,
// --project, --region, --temp_location, ...) are not user-facing here: the
// template launcher sets them.
var notParameters = map[string]string{
	"demo":            "local demo: an embedded quota server on loopback and outputs under out/",
	"pubsub_emulator": "host:port of a local Pub/Sub emulator; on Dataflow the job uses the real service",
	"header":          "its value would show in the job's pipeline options in the Dataflow UI; header_env keeps secrets out of the job",
	"pubsub_project":  "the templates take full projects/P/topics/T and projects/P/subscriptions/S names only",
}

// templateFiles are the metadata files of the templates, each with the
// flags it leaves out on top of notParameters.
var templateFiles = []struct {
	file    string
	exclude map[string]string
}{
	{"metadata.json", map[string]string{
		"reprocess":          "reprocessing mode: the replay template, metadata-replay.json",
		"max_total_attempts": "reprocessing mode: the replay template, metadata-replay.json",
		"parked_topic":       "reprocessing mode: the replay template, metadata-replay.json",
	}},
	{"metadata-replay.json", map[string]string{
		"input":         "the replay template reads the dead-letter subscription only",
		"generate":      "the replay template reads the dead-letter subscription only",
		"generate_rate": "the replay template reads the dead-letter subscription only",
	}},
}

// wrongValues are obviously wrong values for each parameter with regexes;
// every one must be rejected by the parameter's regexes.
var wrongValues = map[string][]string{
	"name":                {"beam throttle", "-x"},
	"subscription":        {"projects/my-project/topics/requests", "beamthrottle-requests", "my subscription"},
	"input":               {"/data/requests/*.jsonl", "gs://"},
	"generate":            {"-5", "ten"},
	"generate_rate":       {"-1", "fast"},
	"input_format":        {"json", "JSONL"},
	"idle_timeout":        {"10", "10 minutes"},
	"caller":              {"grpc", "HTTP"},
	"url":                 {"dlp.googleapis.com/v2", "ftp://example.com/x", "https://exa mple.com/"},
	"method":              {"post", "GET POST"},
	"content_type":        {"json", "application json"},
	"header_env":          {"Authorization: Bearer secret", "Authorization"},
	"max_response_bytes":  {"10MB", "-1"},
	"groups":              {"0", "eight"},
	"batch_size":          {"0", "1e3"},
	"batch_interval":      {"1", "0.5", "1 second"},
	"calls_in_flight":     {"-1", "many"},
	"items_per_call":      {"0", "fifty"},
	"bytes_per_call":      {"-1", "1MB"},
	"cost":                {"tokens", "json:", "2"},
	"item_status_field":   {"status code"},
	"throttle_mode":       {"adaptive", "SRE"},
	"throttle_scope":      {"process", "Worker"},
	"priority":            {"high", "json:", "field:x"},
	"cache":               {"lru", "Redis"},
	"cache_address":       {"redis", "10.0.0.4"},
	"cache_ttl":           {"3600", "1 hour"},
	"cache_key":           {"id", "json:"},
	"quota_backend":       {"memcached", "Redis"},
	"quota_address":       {"redis", "10.0.0.3"},
	"quota_key":           {"my quota", "a/b"},
	"quota_rate":          {"600", "600 per minute"},
	"quota_burst":         {"-1", "ten"},
	"quota_high_share":    {"1", "-0.1"},
	"quota_normal_share":  {"1.5", "half"},
	"quota_domain":        {"my domain"},
	"quota_descriptors":   {"api", "a=b,"},
	"quota_fail":          {"fail", "Open"},
	"quota_timeout":       {"1", "soon"},
	"k":                   {"-1", "two"},
	"window":              {"tumbling", "Fixed"},
	"reset_interval":      {"60", "1 minute"},
	"window_size":         {"120", "2 min"},
	"bucket":              {"1", "one second"},
	"strategy":            {"queue", "Route"},
	"max_attempts":        {"0", "three"},
	"max_age":             {"600", "10 min"},
	"max_wait":            {"10", "-1m", "forever", "1 m"},
	"call_timeout":        {"30", "30 s"},
	"max_buffered":        {"10k", "-1"},
	"max_payload_bytes":   {"512KB", "-1"},
	"failures_as_rejects": {"yes", "1"},
	"output_prefix":       {"out/", "/tmp/beamthrottle/"},
	"success_topic":       {"projects/my-project/subscriptions/success", "beamthrottle-success"},
	"dead_letter_topic":   {"projects/my-project/subscriptions/dlq", "beamthrottle-dead-letter"},
	"dead_letter_errors":  {"no", "TRUE"},
	"publish_timeout":     {"60", "1 minute"},
	"reprocess":           {"false", "yes"},
	"max_total_attempts":  {"0", "five"},
	"parked_topic":        {"projects/my-project/subscriptions/parked", "beamthrottle-parked"},
}

// exampleRE finds the documented example value in a parameter's helpText.
var exampleRE = regexp.MustCompile(`\(example: ([^()\s]+)\)`)

// tmpRoot holds the binary built by the tests; TestMain removes it.
var tmpRoot string

func TestMain(m *testing.M) {
	beam.Init()
	var err error
	if tmpRoot, err = os.MkdirTemp("", "beamthrottle-templates-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmpRoot)
	os.Exit(code)
}

// templateMetadata is a Flex Template metadata file. Decoding rejects keys
// not listed here, which catches misspelt keys ("helptext"): add a key here
// when a template starts using it.
type templateMetadata struct {
	Name                string      `json:"name"`
	Description         string      `json:"description"`
	Streaming           *bool       `json:"streaming"`
	SupportsAtLeastOnce *bool       `json:"supportsAtLeastOnce,omitempty"`
	SupportsExactlyOnce *bool       `json:"supportsExactlyOnce,omitempty"`
	Parameters          []parameter `json:"parameters"`
}

type parameter struct {
	Name       string   `json:"name"`
	Label      string   `json:"label"`
	HelpText   string   `json:"helpText"`
	IsOptional *bool    `json:"isOptional"`
	Regexes    []string `json:"regexes,omitempty"`
}

// example returns the value documented in the parameter's helpText.
func (p parameter) example() (string, bool) {
	m := exampleRE.FindStringSubmatch(p.HelpText)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// readMetadata decodes a metadata file strictly.
func readMetadata(t *testing.T, file string) templateMetadata {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var md templateMetadata
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&md); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return md
}

// rawParameters decodes the parameters of a metadata file as raw key/value
// maps, to see which keys are present.
func rawParameters(t *testing.T, file string) []map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Parameters []map[string]json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return raw.Parameters
}

// pipelineFlags returns a fresh flag set with the pipeline's flags.
func pipelineFlags() (*flag.FlagSet, *pipeline.Options) {
	fs := flag.NewFlagSet("beamthrottle", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	return fs, pipeline.RegisterFlags(fs)
}

// userFlags returns the user-facing flags of the binary: the pipeline's
// (pipeline.RegisterFlags) and those cmd/beamthrottle defines itself, i.e.
// the binary's flags that Beam, imported by this test too, does not define.
func userFlags(t *testing.T) map[string]bool {
	t.Helper()
	fs, _ := pipelineFlags()
	names := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	for name := range binaryFlags(t) {
		if flag.CommandLine.Lookup(name) == nil {
			names[name] = true
		}
	}
	return names
}

// helpFlagRE finds the flags in the binary's --help (cmd/beamthrottle/usage.go).
var helpFlagRE = regexp.MustCompile(`(?m)^  --(\w+)`)

// binaryFlags returns every flag the built binary accepts, from its -help.
func binaryFlags(t *testing.T) map[string]bool {
	t.Helper()
	// -help prints the flags and exits; its exit status does not matter.
	out, _ := exec.Command(templateBinary(t), "-help").CombinedOutput()
	names := map[string]bool{}
	for _, m := range helpFlagRE.FindAllStringSubmatch(string(out), -1) {
		names[m[1]] = true
	}
	if !names["runner"] || !names["batch_size"] {
		t.Fatalf("beamthrottle -help lists no --runner or --batch_size; output:\n%s", out)
	}
	return names
}

func TestMetadataTopLevel(t *testing.T) {
	for _, tf := range templateFiles {
		t.Run(tf.file, func(t *testing.T) {
			md := readMetadata(t, tf.file)
			if md.Name == "" || md.Description == "" {
				t.Errorf("name %q, description %q: want both non-empty", md.Name, md.Description)
			}
			if md.Streaming == nil || !*md.Streaming {
				t.Errorf("got streaming %v, want true (the Pub/Sub source makes a streaming job)", md.Streaming)
			}
			if len(md.Parameters) == 0 {
				t.Errorf("got no parameters")
			}
		})
	}
}

// TestParametersAreFlags checks that every parameter is a user-facing flag
// of the binary and is fully described.
func TestParametersAreFlags(t *testing.T) {
	binary := binaryFlags(t)
	user := userFlags(t)
	for _, tf := range templateFiles {
		t.Run(tf.file, func(t *testing.T) {
			md := readMetadata(t, tf.file)
			raw := rawParameters(t, tf.file)
			seen := map[string]bool{}
			for i, p := range md.Parameters {
				switch {
				case !binary[p.Name]:
					t.Errorf("parameter %q is not a flag of the binary (beamthrottle -help)", p.Name)
				case !user[p.Name]:
					t.Errorf("parameter %q is a Beam/runner flag: the template launcher sets it, it must not be a template parameter", p.Name)
				}
				if seen[p.Name] {
					t.Errorf("parameter %q is declared twice", p.Name)
				}
				seen[p.Name] = true
				if strings.TrimSpace(p.Label) == "" || strings.TrimSpace(p.HelpText) == "" {
					t.Errorf("parameter %q: got label %q, helpText %q; want both non-empty", p.Name, p.Label, p.HelpText)
				}
				if v := string(raw[i]["isOptional"]); v != "true" && v != "false" {
					t.Errorf("parameter %q: got isOptional %q, want the key set explicitly to true or false", p.Name, v)
				}
			}
		})
	}
}

// TestFlagsAreParameters checks that every user-facing flag of the binary is
// a parameter of every template, or deliberately excluded.
func TestFlagsAreParameters(t *testing.T) {
	user := userFlags(t)
	for _, tf := range templateFiles {
		t.Run(tf.file, func(t *testing.T) {
			md := readMetadata(t, tf.file)
			params := map[string]bool{}
			for _, p := range md.Parameters {
				params[p.Name] = true
			}
			excluded := func(name string) (string, bool) {
				if why, ok := tf.exclude[name]; ok {
					return why, true
				}
				why, ok := notParameters[name]
				return why, ok
			}
			for _, name := range slices.Sorted(maps.Keys(user)) {
				why, isExcluded := excluded(name)
				switch {
				case params[name] && isExcluded:
					t.Errorf("flag --%s is a parameter and also excluded (%s): drop one", name, why)
				case !params[name] && !isExcluded:
					t.Errorf("flag --%s is neither a parameter of %s nor excluded: add a parameter, or an entry with the reason to notParameters / this template's exclusions in templates_test.go", name, tf.file)
				}
			}
			for _, ex := range []map[string]string{notParameters, tf.exclude} {
				for name := range ex {
					if !user[name] {
						t.Errorf("exclusion %q names no user-facing flag of the binary: remove or rename it", name)
					}
				}
			}
		})
	}
}

// TestParameterValues checks each parameter's regexes (POSIX egrep syntax,
// as Dataflow wants) against its documented example and against obviously
// wrong values, and that the example is a valid value of the flag.
func TestParameterValues(t *testing.T) {
	used := map[string]bool{}
	for _, tf := range templateFiles {
		md := readMetadata(t, tf.file)
		for _, p := range md.Parameters {
			used[p.Name] = true
			t.Run(tf.file+"/"+p.Name, func(t *testing.T) {
				example, ok := p.example()
				if !ok {
					t.Fatalf("helpText %q documents no value: want \"(example: VALUE)\"", p.HelpText)
				}
				fs, _ := pipelineFlags()
				if fs.Lookup(p.Name) != nil {
					if err := fs.Set(p.Name, example); err != nil {
						t.Errorf("--%s=%s: got %v, want a valid flag value", p.Name, example, err)
					}
				}
				if len(p.Regexes) == 0 {
					t.Fatalf("no regexes; every parameter's value has a shape here: add one")
				}
				var res []*regexp.Regexp
				for _, expr := range p.Regexes {
					re, err := regexp.CompilePOSIX(expr)
					if err != nil {
						t.Fatalf("regex %q: %v", expr, err)
					}
					if !strings.HasPrefix(expr, "^") || !strings.HasSuffix(expr, "$") {
						t.Errorf("regex %q: want it anchored with ^...$", expr)
					}
					// Keep to syntax that means the same in POSIX egrep, RE2
					// and Java, whichever the service validates with.
					if strings.Contains(expr, "[:") || strings.Contains(expr, `\`) {
						t.Errorf("regex %q: want no [:class:] and no backslash escapes ([.] for a dot)", expr)
					}
					res = append(res, re)
				}
				matchesAll := func(v string) bool {
					for _, re := range res {
						if !re.MatchString(v) {
							return false
						}
					}
					return true
				}
				if !matchesAll(example) {
					t.Errorf("example %q: got rejected by %q, want accepted", example, p.Regexes)
				}
				wrong := wrongValues[p.Name]
				if len(wrong) == 0 {
					t.Errorf("no obviously wrong value in wrongValues to check %q against", p.Regexes)
				}
				for _, v := range wrong {
					if matchesAll(v) {
						t.Errorf("wrong value %q: got accepted by %q, want rejected", v, p.Regexes)
					}
				}
			})
		}
	}
	for name := range wrongValues {
		if !used[name] {
			t.Errorf("wrongValues[%q]: no template has this parameter", name)
		}
	}
}

// TestCallerParameter checks that the caller parameter accepts exactly the
// callers compiled into the binary.
func TestCallerParameter(t *testing.T) {
	for _, tf := range templateFiles {
		md := readMetadata(t, tf.file)
		i := slices.IndexFunc(md.Parameters, func(p parameter) bool { return p.Name == "caller" })
		if i < 0 {
			continue
		}
		for _, expr := range md.Parameters[i].Regexes {
			re := regexp.MustCompilePOSIX(expr)
			for _, name := range pipeline.Callers() {
				if !re.MatchString(name) {
					t.Errorf("%s: caller %q (registered in the binary): got rejected by %q, want accepted", tf.file, name, expr)
				}
			}
		}
	}
}

// TestTemplatesAgree checks that a parameter both templates declare is
// validated the same way in both.
func TestTemplatesAgree(t *testing.T) {
	first := readMetadata(t, templateFiles[0].file)
	byName := map[string]parameter{}
	for _, p := range first.Parameters {
		byName[p.Name] = p
	}
	for _, tf := range templateFiles[1:] {
		for _, p := range readMetadata(t, tf.file).Parameters {
			q, ok := byName[p.Name]
			if ok && !slices.Equal(p.Regexes, q.Regexes) {
				t.Errorf("%s: got regexes %q for %q, want %q as in %s", tf.file, p.Regexes, p.Name, q.Regexes, templateFiles[0].file)
			}
		}
	}
}

// dockerInstruction is one instruction of a Dockerfile, continuation lines
// joined.
type dockerInstruction struct {
	cmd  string // upper case: FROM, RUN, ...
	args string
}

// parseDockerfile splits a Dockerfile into instructions.
func parseDockerfile(text string) []dockerInstruction {
	var out []dockerInstruction
	var cur strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue // a comment inside a continued instruction
		}
		if before, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(before + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, dockerInstruction{strings.ToUpper(cmd), strings.Join(strings.Fields(args), " ")})
		cur.Reset()
	}
	return out
}

// dockerStage is a build stage: its FROM image, its name and instructions.
type dockerStage struct {
	image, name string
	body        []dockerInstruction
}

// dockerStages splits instructions into stages, resolving ${ARG} in FROM
// lines with the defaults of the ARGs before the first FROM.
func dockerStages(t *testing.T, ins []dockerInstruction) []dockerStage {
	t.Helper()
	args := map[string]string{}
	var stages []dockerStage
	for _, in := range ins {
		switch {
		case in.cmd == "ARG" && len(stages) == 0:
			name, def, _ := strings.Cut(in.args, "=")
			args[name] = def
		case in.cmd == "FROM":
			f := strings.Fields(os.Expand(in.args, func(k string) string { return args[k] }))
			st := dockerStage{image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
		case len(stages) > 0:
			stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
		}
	}
	if len(stages) == 0 {
		t.Fatal("Dockerfile: no FROM")
	}
	return stages
}

// copies maps each destination of the stage's COPY instructions to its
// source, "--from=STAGE PATH" or a path in the build context.
func (s dockerStage) copies() map[string]string {
	m := map[string]string{}
	for _, in := range s.body {
		if in.cmd != "COPY" {
			continue
		}
		f := strings.Fields(in.args)
		from := ""
		if strings.HasPrefix(f[0], "--from=") {
			from, f = f[0]+" ", f[1:]
		}
		if len(f) == 2 {
			m[f[1]] = from + f[0]
		}
	}
	return m
}

func (s dockerStage) workdir() string {
	dir := "/"
	for _, in := range s.body {
		if in.cmd == "WORKDIR" {
			dir = path.Join(dir, in.args)
		}
	}
	return dir
}

// launchExec returns the binary and flags of the exec line of launch.sh.
func launchExec(t *testing.T, script string) (bin string, flags []string) {
	t.Helper()
	for _, line := range strings.Split(script, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "exec" && f[len(f)-1] == `"$@"` {
			return f[1], f[2 : len(f)-1]
		}
	}
	t.Fatalf("launch.sh: no line `exec BINARY FLAGS... \"$@\"`")
	return "", nil
}

// TestDockerfile checks the launcher image: a pinned launcher base, and
// FLEX_TEMPLATE_GO_BINARY naming (through launch.sh) the binary that the
// build stage produces with binaryBuild.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	stages := dockerStages(t, parseDockerfile(string(b)))
	final := stages[len(stages)-1]

	const launcherBase = "gcr.io/dataflow-templates-base/go-template-launcher-base"
	repo, tag, _ := strings.Cut(final.image, ":")
	if repo != launcherBase {
		t.Errorf("final stage FROM %q: want %s:TAG", final.image, launcherBase)
	}
	if tag == "" || tag == "latest" || strings.Contains(tag, "$") {
		t.Errorf("launcher base image tag %q: want a pinned tag, not latest", tag)
	}

	var goBinary, entrypoint string
	for _, in := range final.body {
		switch in.cmd {
		case "ENV":
			if v, ok := strings.CutPrefix(in.args, "FLEX_TEMPLATE_GO_BINARY="); ok {
				goBinary = strings.Trim(v, `"`)
			}
		case "ENTRYPOINT":
			entrypoint = in.args
		}
	}
	if want := `["/opt/google/dataflow/go_template_launcher"]`; entrypoint != want {
		t.Errorf("got ENTRYPOINT %s, want %s", entrypoint, want)
	}
	copies := final.copies()

	// FLEX_TEMPLATE_GO_BINARY is launch.sh, copied from the build context.
	src, ok := copies[goBinary]
	if !ok || strings.HasPrefix(src, "--from=") {
		t.Fatalf("FLEX_TEMPLATE_GO_BINARY=%q: want a file COPYed from the build context (launch.sh); COPYs: %v", goBinary, copies)
	}
	script, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(src)))
	if err != nil {
		t.Fatalf("FLEX_TEMPLATE_GO_BINARY is COPYed from %s: %v", src, err)
	}
	bin, flags := launchExec(t, string(script))
	for _, want := range []string{"--async", "--worker_binary=" + bin} {
		if !slices.Contains(flags, want) {
			t.Errorf("%s execs %s with %q: want %s among them", src, bin, flags, want)
		}
	}

	// launch.sh execs the binary of the build stage.
	binSrc, ok := copies[bin]
	from, binPath, found := strings.Cut(binSrc, " ")
	if !ok || !found {
		t.Fatalf("%s execs %s: want it COPYed --from the build stage; COPYs: %v", src, bin, copies)
	}
	stage := strings.TrimPrefix(from, "--from=")
	i := slices.IndexFunc(stages, func(s dockerStage) bool { return s.name == stage })
	if i < 0 {
		t.Fatalf("COPY %s: no stage named %q", binSrc, stage)
	}
	build := stages[i]
	runs := false
	for _, in := range build.body {
		if in.cmd == "RUN" && in.args == binaryBuild {
			runs = true
		}
	}
	if !runs {
		t.Errorf("build stage %q: want RUN %s", stage, binaryBuild)
	}
	if got, want := binPath, path.Join(build.workdir(), "bin/beamthrottle"); got != want {
		t.Errorf("COPY --from=%s %s: want %s, the output of %q in WORKDIR %s", stage, got, want, binaryBuild, build.workdir())
	}
}

// TestMakefileTemplateBinary checks that `make template-binary` runs
// binaryBuild.
func TestMakefileTemplateBinary(t *testing.T) {
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var recipe []string
	phony := false
	lines := strings.Split(string(b), "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, ".PHONY:") && slices.Contains(strings.Fields(line), "template-binary") {
			phony = true
		}
		if strings.HasPrefix(line, "template-binary:") {
			for _, l := range lines[i+1:] {
				if !strings.HasPrefix(l, "\t") {
					break
				}
				recipe = append(recipe, strings.Join(strings.Fields(strings.ReplaceAll(l, "$(GO)", "go")), " "))
			}
		}
	}
	const want = "template-binary:\n\tCGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -o bin/beamthrottle ./cmd/beamthrottle\n(and template-binary in .PHONY)"
	if !slices.Contains(recipe, binaryBuild) || !phony {
		t.Errorf("Makefile: got template-binary recipe %q (in .PHONY: %v), want\n%s", recipe, phony, want)
	}
}

// built is the binary of binaryBuild, built once for all tests.
var built struct {
	once sync.Once
	path string
	err  error
}

// templateBinary builds the template's binary with binaryBuild (output in
// tmpRoot) and returns its path.
func templateBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		f := strings.Fields(binaryBuild)
		var env []string
		for len(f) > 0 && strings.Contains(f[0], "=") {
			env, f = append(env, f[0]), f[1:]
		}
		out := filepath.Join(tmpRoot, "beamthrottle")
		args := slices.Clone(f[1:])
		i := slices.Index(args, "-o")
		args[i+1] = out
		cmd := exec.Command(f[0], args...)
		cmd.Dir = ".." // the repository root
		cmd.Env = append(os.Environ(), env...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("%s: %v\n%s", binaryBuild, err, msg)
			return
		}
		built.path = out
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// TestStaticBinary checks that binaryBuild makes a statically linked
// linux/amd64 executable: no program interpreter, no shared libraries.
func TestStaticBinary(t *testing.T) {
	f, err := elf.Open(templateBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 || f.Type != elf.ET_EXEC {
		t.Errorf("got %v %v, want EM_X86_64 ET_EXEC", f.Machine, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("got a PT_INTERP program header, want none (static binary)")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) != 0 {
		t.Errorf("got DT_NEEDED %q, want none (static binary)", libs)
	}
}
