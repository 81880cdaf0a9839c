package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// testUI is the suite's Temporal Web UI and the gateway's codec endpoint it
// decodes payloads with, wired as `make run` wires them: the UI server is
// given the endpoint (no secret in it) and sends the console's cookie, the
// API allows the UI's origin, and tools have a token of their own.
type testUI struct {
	token    string // the tools' bearer token (PAYGATE_CODEC_TOKEN)
	endpoint string // the codec endpoint as the UI is given it
	url      string // the UI's base URL, known once the server runs
}

// newTestUI makes the codec's tool token for the API at apiURL.
func newTestUI(apiURL string) *testUI {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return &testUI{token: hex.EncodeToString(b), endpoint: apiURL + "/codec"}
}

// temporalUIWait bounds how long the UI may take to show a workflow's
// decoded input: it loads its scripts, asks the frontend, then the codec.
const temporalUIWait = 45 * time.Second

// TestTemporalUIShowsDecodedPayloads pays an order whose shopper has an
// email of its own, then, in headless Chromium, signs in to the console as
// an ops user and opens the order's workflow in the Temporal Web UI, as an
// operator would: the page shows the email, which the history holds only
// encrypted (encrypted_histories_test.go), so the UI decoded it through the
// gateway's codec endpoint, across origins, with the console's cookie. The
// gateway's log names the operator who asked.
func TestTemporalUIShowsDecodedPayloads(t *testing.T) {
	if env.ui == nil || env.ui.url == "" {
		t.Fatal("the suite's Temporal server runs no UI")
	}
	creds := env.auto
	orderNo := newOrderNo(t)
	email := "ui-" + strings.ToLower(orderNo) + "@example.net"
	f := cardOrder(creds, orderNo, "4242424242424242")
	f["shopper_email"] = email
	_, r := authorise(t, signCard(f, creds.SignKey))
	if r.ResultInfo != "0000:Success" {
		t.Fatalf("payment: %s", r.ResultInfo)
	}
	id := workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo)
	ctx := context.Background()
	desc, err := env.temporal.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	runID := desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	// The email is in the workflow's input, which the raw history holds
	// encrypted.
	h, err := rawHistory(ctx, id, runID)
	if err != nil {
		t.Fatal(err)
	}
	if raw := h.String(); strings.Contains(raw, email) {
		t.Fatal("the raw history holds the email: nothing to decode")
	}

	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	browserCtx := startBrowser(t)
	sh := shot{t: t, root: root, name: "temporal-ui", docs: map[string]string{"decoded": "temporal-ui-decoded.png"}}
	tab := openTab(t, browserCtx, sh)
	ops := consoleUser(t, models.RoleOps, "")
	consoleSignIn(t, tab, ops, "/console/stuck")
	page := env.ui.url + "/namespaces/" + url.PathEscape(env.cfg.TemporalNamespace) + "/workflows/" +
		url.PathEscape(id) + "/" + url.PathEscape(runID) + "/history"
	if err := chromedp.Do(tab, chromedp.Navigate(page)); err != nil {
		t.Fatalf("open %s: %v", page, err)
	}
	// The UI draws a long payload's lines only near its block's scrolled
	// view, so each poll reads the page and every scrolling block, then
	// moves each block on by half its height (back to the top at its
	// end): within a few polls every line of the input has been drawn.
	text, err := waitJS(tab, `(() => {
		if (!document.body) return "";
		let seen = document.body.innerText;
		for (const el of document.querySelectorAll("main *, [role=main] *, body *")) {
			if (el.scrollHeight <= el.clientHeight + 4) continue;
			const y = getComputedStyle(el).overflowY;
			if (y !== "auto" && y !== "scroll") continue;
			seen += "\n" + el.innerText;
			el.scrollTop = el.scrollTop + el.clientHeight >= el.scrollHeight - 4 ? 0 : el.scrollTop + el.clientHeight / 2;
		}
		return seen;
	})()`, temporalUIWait, func(s string) bool {
		return strings.Contains(s, email)
	})
	if err != nil {
		sh.take(tab, "not-decoded")
		t.Fatalf("the UI never showed %s decoded: %v\npage text:\n%s", email, err, text)
	}
	// Bring the email into view inside the input's scrolling block and
	// mark it, so the screenshot shows what was decoded.
	if _, err := evalJS[bool](tab, `(() => {
		const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
		for (let n = w.nextNode(); n; n = w.nextNode()) {
			if (n.textContent.includes(`+strconv.Quote(email)+`)) {
				n.parentElement.scrollIntoView({block: "center"});
				n.parentElement.style.outline = "2px solid #d00";
				return true;
			}
		}
		return false;
	})()`); err != nil {
		t.Logf("mark the email: %v", err)
	}
	sh.take(tab, "decoded")
	logs := env.logs.String()
	if !strings.Contains(logs, `"path":"/codec/decode","status":200`) || !strings.Contains(logs, `"by":"`+ops+`","auth":"console session"`) {
		t.Error("the gateway's log shows no codec call by the operator")
	}
	// What the UI hands anyone who loads its settings holds no secret.
	settings := httpGet(t, env.ui.url+"/api/v1/settings")
	if !strings.Contains(settings, env.ui.endpoint) || strings.Contains(settings, env.ui.token) {
		t.Errorf("the UI's settings: %s", settings)
	}
}

// httpGet returns the body of a GET of url.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
