package simulator

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
)

// pageStyle is the one style sheet of every page, inline.
const pageStyle = `
body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
.amount{font-size:1.5rem;font-weight:600}
button{padding:.5rem 1rem;margin:.5rem .5rem 0 0}
label{display:block;margin-top:1rem}
input[type=text]{font-size:1.2rem;padding:.3rem;width:10rem}
`

// resultScript posts the ACS's result form back to the merchant's side as
// soon as the page has loaded.
const resultScript = `window.addEventListener("load",function(){document.getElementById("threeds-result").submit()})`

const pageHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{template "title" .}}</title>
<style>` + pageStyle + `</style>
</head>
<body>
`

// pageCSP is the Content-Security-Policy of every page: nothing loads but
// the page's own inline style and script (allowed by hash), and no other
// site may frame the page (clickjacking of the challenge or the pay button).
// Forms are not limited (form-action): the result page posts to the
// merchant's side and the APM page's answer redirects to the shop, both on
// other origins.
var pageCSP = "default-src 'none'; style-src " + cspHash(pageStyle) + "; script-src " + cspHash(resultScript) +
	"; base-uri 'none'; frame-ancestors 'none'"

// cspHash is the CSP source expression that allows the inline text s.
func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// setPageHeaders sets the security headers every page of the simulator
// sends.
func setPageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

const pageFoot = `
</body>
</html>
`

func newPage(name, title, body string) *template.Template {
	return template.Must(template.New(name).Parse(
		`{{define "title"}}` + title + `{{end}}` + pageHead + body + pageFoot))
}

var (
	acsPage = newPage("acs", "Verify your payment", `<h1>Verify your payment</h1>
<p>Amount: <span class="amount" id="amount">{{.Amount}} {{.Currency}}</span></p>
<p>Card ending in <span id="last4">{{.Last4}}</span></p>
<form method="post" action="/acs/{{.ID}}">
<label for="otp">One-time code</label>
<input type="text" id="otp" name="otp" inputmode="numeric" autocomplete="one-time-code" maxlength="6" required autofocus>
<div>
<button type="submit" id="verify">Verify</button>
</div>
</form>
<form method="post" action="/acs/{{.ID}}">
<input type="hidden" name="action" value="cancel">
<button type="submit" id="cancel-3ds">Cancel</button>
</form>`)

	resultPage = newPage("result", "Returning to the merchant", `<p>Returning to the merchant&hellip;</p>
<form id="threeds-result" method="post" action="{{.ReturnURL}}">
<input type="hidden" name="authentication_id" value="{{.AuthenticationID}}">
<input type="hidden" name="status" value="{{.Status}}">
<input type="hidden" name="eci" value="{{.ECI}}">
<input type="hidden" name="cavv" value="{{.CAVV}}">
<input type="hidden" name="ds_trans_id" value="{{.DSTransID}}">
<input type="hidden" name="reference" value="{{.Reference}}">
<input type="hidden" name="signature" value="{{.Signature}}">
<button type="submit" id="continue">Continue</button>
</form>
<script>`+resultScript+`</script>`)

	apmPage = newPage("apm", "{{.Method}} payment", `<h1>{{.Method}} payment</h1>
<p>Amount: <span class="amount" id="amount">{{.Amount}} {{.Currency}}</span></p>
<form method="post" action="/apm/{{.ID}}/pay">
<button type="submit" id="apm-pay">Pay</button>
</form>
<form method="post" action="/apm/{{.ID}}/cancel">
<button type="submit" id="apm-cancel">Cancel</button>
</form>`)

	completedPage = newPage("completed", "Already completed", `<h1>Already completed</h1>
<p>This payment step has already been completed. You may close this page.</p>`)

	notFoundPage = newPage("not-found", "Not found", `<h1>Not found</h1>
<p>There is no such payment step.</p>`)
)

// writePage renders t into a buffer first, so a template error never leaves
// a half-written page.
func writePage(w http.ResponseWriter, status int, t *template.Template, data any) {
	var buf bytes.Buffer
	h := w.Header()
	setPageHeaders(h)
	if err := t.Execute(&buf, data); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// zeroDecimal lists currencies without minor units.
var zeroDecimal = map[string]bool{
	"BIF": true, "CLP": true, "DJF": true, "GNF": true, "ISK": true, "JPY": true, "KMF": true,
	"KRW": true, "PYG": true, "RWF": true, "UGX": true, "VND": true, "VUV": true, "XAF": true,
	"XOF": true, "XPF": true,
}

// formatAmount renders minor units as a decimal amount, e.g. 1234 EUR as
// "12.34".
func formatAmount(minor int64, currency string) string {
	if zeroDecimal[currency] {
		return fmt.Sprintf("%d", minor)
	}
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	return fmt.Sprintf("%s%d.%02d", sign, minor/100, minor%100)
}
