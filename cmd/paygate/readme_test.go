package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readmeExamples are the shell blocks of the README's "Try it" section, in
// order.
func readmeExamples(t *testing.T, root string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "\n## Try it\n")
	if start < 0 {
		t.Fatal("README has no Try it section")
	}
	s = s[start+1:]
	if end := strings.Index(s[3:], "\n## "); end >= 0 {
		s = s[:end+3]
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(s, -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// TestREADMEExamplesAsWritten runs the README's examples, in order, in one
// shell, against a fresh `paygate dev`, and checks each answers what the
// README says. Only the addresses and the data directory are this test's.
func TestREADMEExamplesAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole dev setup")
	}
	root := repoRoot(t)
	needTemporalCLI(t, root)
	blocks := readmeExamples(t, root)
	want := []struct {
		name string
		has  []string
	}{
		{"card payment", []string{"<order_status>1</order_status>", "<result_info>0000:Success</result_info>"}},
		{"JSON payment", []string{"<result_info>0000:Success</result_info>"}},
		{"query", []string{"ORD-1001", "ORD-1002"}},
		{"refund", []string{`"refund_status":"1"`, `-01"`}},
		{"strong query", []string{"ORD-1001"}},
		{"hosted payment", nil},
		{"APM payment", []string{"<issuer_url>http"}},
		{"payout", []string{`"status":"COMPLETED"`, `"fee_amount":5.00`, `"amount_payer_pays":105.00`}},
		{"stored card", []string{"<result_info>0000:Success</result_info>", "<token_id>"}},
		{"token delete", []string{"0000"}},
		{"subscription changes and cancel", []string{`"recurring_status":"4"`, `"contract_amount":"7.50"`,
			`"recurring_status":"1"`, `"recurring_status":"0"`}},
		{"disputes", []string{`"disputes":[]`, "0000:Success"}},
		{"optimise", []string{"payment_methods", "0000:Success"}},
		{"merchant create", []string{`"merchant_id"`, `"mode": "live"`}},
	}
	if len(blocks) != len(want) {
		t.Fatalf("the README has %d examples, the test knows %d: update the test with the README", len(blocks), len(want))
	}

	dbURL := testDatabase(t, root, "paygate_readme_")
	work := t.TempDir()
	bin := buildPaygate(t, work)
	data := filepath.Join(work, "data")
	ports := freePorts(t, 7)
	api := "127.0.0.1:" + strconv.Itoa(ports[0])
	dev := startDev(t, bin, dbURL, "dev", "-data", data, "-bin", filepath.Join(root, ".bin"),
		"-api", api, "-simulator", "127.0.0.1:"+strconv.Itoa(ports[1]), "-rail", "127.0.0.1:"+strconv.Itoa(ports[2]),
		"-simbank", "127.0.0.1:"+strconv.Itoa(ports[3]), "-temporal-port", strconv.Itoa(ports[4]),
		"-ui-port", strconv.Itoa(ports[5]), "-metrics", "127.0.0.1:"+strconv.Itoa(ports[6]))
	defer stopDev(dev)

	// One shell runs every block in order, as a reader would paste them;
	// a marker after each splits the output.
	var script strings.Builder
	script.WriteString("cd " + work + "\n")
	for i, b := range blocks {
		b = strings.ReplaceAll(b, "go build -o paygate ./cmd/paygate", "true")
		b = strings.ReplaceAll(b, "127.0.0.1:8080", api)
		b = strings.ReplaceAll(b, ".data/", data+"/")
		script.WriteString(b)
		script.WriteString("\necho\necho '@@@ end of example " + strconv.Itoa(i) + "'\n")
	}
	sh := exec.Command("bash", "-c", script.String())
	sh.Env = os.Environ()
	output, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the examples failed: %v\n%s", err, output)
	}
	parts := strings.Split(string(output), "@@@ end of example ")
	for i, w := range want {
		t.Run(w.name, func(t *testing.T) {
			got := parts[i]
			for _, h := range w.has {
				if !strings.Contains(got, h) {
					t.Errorf("the answer lacks %s:\n%s", h, got)
				}
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(work, "checkout.html")); err != nil || !strings.Contains(string(b), "<form") {
		t.Errorf("the hosted payment's page: %v\n%s", err, b)
	}
	// make run lists the console and a login per role.
	var demo demoFile
	if b, err := os.ReadFile(filepath.Join(data, "demo-merchant.json")); err != nil || json.Unmarshal(b, &demo) != nil {
		t.Fatalf("demo-merchant.json: %v", err)
	}
	if demo.ConsoleURL != "http://"+api+"/console/" || len(demo.ConsoleUsers) != 3 || demo.MetricsURL == "" || demo.APIMetricsURL == "" {
		t.Errorf("demo-merchant.json: console %q, %d console users, metrics %q and %q", demo.ConsoleURL, len(demo.ConsoleUsers), demo.MetricsURL, demo.APIMetricsURL)
	}
	// The gateway runs as it does in production, its parts in processes of
	// their own, and each of the API and the worker counts its statements.
	if got, want := paygateChildren(t, dev.Process.Pid), []string{"serve", "simulator", "worker"}; !slices.Equal(got, want) {
		t.Errorf("paygate dev's processes: %v, want %v", got, want)
	}
	for _, u := range []string{demo.APIMetricsURL, demo.MetricsURL} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), "paygate_db_statements_total{") {
			t.Errorf("%s counts no statements", u)
		}
	}
}

// paygateChildren lists the commands of the paygate processes whose parent
// is pid, sorted.
func paygateChildren(t *testing.T, pid int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	for _, stat := range stats {
		b, err := os.ReadFile(stat)
		if err != nil {
			continue // the process ended meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so the fields
		// are read after its closing parenthesis.
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		fields := strings.Fields(s[end+1:])
		if open < 0 || end < open || len(fields) < 2 || s[open+1:end] != "paygate" || fields[1] != strconv.Itoa(pid) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(filepath.Dir(stat), "cmdline"))
		if err != nil {
			continue
		}
		if args := strings.Split(string(cmdline), "\x00"); len(args) > 1 {
			commands = append(commands, args[1])
		}
	}
	slices.Sort(commands)
	return commands
}
