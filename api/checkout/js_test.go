package checkout

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/card"
)

// runNode runs script with the payment page's JavaScript loaded as "pay";
// the test is skipped where Node.js is not installed.
func runNode(t *testing.T, script string) []byte {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "payment.js"), []byte(paymentJS), 0o600); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(dir, "main.js")
	if err := os.WriteFile(main, []byte("const pay = require('./payment.js');\n"+script), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, main).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("node: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	return out
}

func TestAutosubmitScriptParses(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	p := filepath.Join(t.TempDir(), "autosubmit.js")
	if err := os.WriteFile(p, []byte(autosubmitJS), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--check", p).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// The page's number and brand checks agree with internal/domain/card.
func TestScriptCardRulesMatchGo(t *testing.T) {
	numbers := []string{
		"4242424242424242", "5555555555554444", "4000000000000002", "4000000000003220", "378282246310005",
		"371449635398431", "6011111111111117", "6445644564456445", "6500000000000002", "3530111333300000",
		"3566002020360505", "6200000000000005", "8171999927660000", "30569309025904", "38520000023237",
		"36227206271667", "3095000000000008", "5018000000000009", "5600000000000003", "5800000000000001",
		"6304000000000000", "6390000000000004", "6700000000000009", "2221000000000009", "2720990000000007",
		"2721000000000004", "2220990000000000", "4242424242424241", "1234567812345670", "0000000000000",
		"", "4", "34", "3", "35", "3528", "3589", "3590", "81", "9999999999999995", "42424242424242424242",
		"424242424242", "4242 4242 4242 4242", "abc",
	}
	type result struct {
		Brand string `json:"brand"`
		Luhn  bool   `json:"luhn"`
		Valid bool   `json:"valid"`
	}
	in, _ := json.Marshal(numbers)
	out := runNode(t, `const ns = `+string(in)+`;
process.stdout.write(JSON.stringify(ns.map(n => ({brand: pay.brand(n), luhn: pay.luhn(n), valid: pay.validNumber(n)}))));`)
	var got []result
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, n := range numbers {
		want := result{card.Brand(n), card.Luhn(n), card.ValidateNumber(n) == nil}
		if got[i] != want {
			t.Errorf("%q: script %+v, Go %+v", n, got[i], want)
		}
	}
}

// The page's expiry and CVV checks agree with internal/domain/card.
func TestScriptExpiryAndCVVMatchGo(t *testing.T) {
	nowT := time.Date(2030, 5, 31, 23, 59, 59, 0, time.UTC)
	type exp struct{ M, Y string }
	cases := []exp{
		{"05", "2030"}, {"5", "2030"}, {"04", "2030"}, {"12", "2029"}, {"06", "2030"}, {"01", "2031"},
		{"05", "30"}, {"04", "30"}, {"13", "2030"}, {"00", "2030"}, {"", "2030"}, {"05", ""}, {"05", "203"},
		{"12", "2050"}, {"01", "2051"}, {"1x", "2030"}, {"005", "2030"},
	}
	in, _ := json.Marshal(cases)
	cvvs := []struct{ CVV, Brand string }{
		{"123", "visa"}, {"1234", "visa"}, {"1234", "amex"}, {"123", "amex"}, {"12a", "visa"}, {"", "visa"}, {"12", "unknown"},
	}
	cin, _ := json.Marshal(cvvs)
	out := runNode(t, `const now = new Date(Date.UTC(2030, 4, 31, 23, 59, 59));
const cs = `+string(in)+`, vs = `+string(cin)+`;
process.stdout.write(JSON.stringify({
  exp: cs.map(c => pay.checkExpiry(c.M, c.Y, now)),
  cvv: vs.map(v => pay.validCVV(v.CVV, v.Brand)),
  all: pay.validate({holder: ' ', number: '4242 4242 4242 4241', month: '04', year: '2030', cvv: '1234'}, now),
  ok: pay.validate({holder: 'Ana', number: '3782-822463-10005', month: '05', year: '2030', cvv: '1234'}, now)
}));`)
	var got struct {
		Exp []string          `json:"exp"`
		CVV []bool            `json:"cvv"`
		All map[string]string `json:"all"`
		OK  map[string]string `json:"ok"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, c := range cases {
		want := ""
		switch err := card.CheckExpiry(c.M, c.Y, nowT); {
		case errors.Is(err, card.ErrExpired):
			want = "expired_card"
		case err != nil:
			want = "invalid_expiry"
		}
		if got.Exp[i] != want {
			t.Errorf("expiry %v: script %q, Go %q", c, got.Exp[i], want)
		}
	}
	for i, v := range cvvs {
		if want := card.ValidateCVV(v.CVV, v.Brand) == nil; got.CVV[i] != want {
			t.Errorf("cvv %v: script %v, Go %v", v, got.CVV[i], want)
		}
	}
	wantAll := map[string]string{"holder": "missing_holder", "number": "invalid_number", "expiry": "expired_card", "cvv": "invalid_cvv"}
	if len(got.All) != len(wantAll) {
		t.Errorf("validate = %v, want %v", got.All, wantAll)
	}
	for k, v := range wantAll {
		if got.All[k] != v {
			t.Errorf("validate[%s] = %q, want %q", k, got.All[k], v)
		}
	}
	if len(got.OK) != 0 {
		t.Errorf("valid amex rejected: %v", got.OK)
	}
}

// The form wiring, run against a minimal stand-in for the DOM: an invalid
// form is not submitted and shows translated errors; a valid one is sent
// with the number as digits only.
func TestScriptFormWiring(t *testing.T) {
	dom := `
function el(tag) {
  const e = {tagName: tag, value: '', attrs: {}, children: [], listeners: {}, hidden: true, disabled: false, textContent: '',
    setAttribute(k, v) { this.attrs[k] = String(v); }, getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; },
    removeAttribute(k) { delete this.attrs[k]; },
    addEventListener(t, f) { (this.listeners[t] = this.listeners[t] || []).push(f); },
    fire(t, ev) { ev = ev || {}; ev.defaultPrevented = false; ev.preventDefault = () => { ev.defaultPrevented = true; }; (this.listeners[t] || []).forEach(f => f(ev)); return ev; },
    appendChild(c) { this.children.push(c); }, removeChild(c) { this.children = this.children.filter(x => x !== c); },
    get firstChild() { return this.children[0] || null; },
    focus() { global.focused = this; } };
  return e;
}
const ids = {'pay-form': el('FORM'), 'card-holder': el('INPUT'), 'card-number': el('INPUT'), 'expiry-month': el('SELECT'),
  'expiry-year': el('SELECT'), 'security-code': el('INPUT'), 'card-brand': el('SPAN'), 'form-error': el('DIV'), 'pay-button': el('BUTTON')};
ids['pay-form'].attrs['data-msg-invalid-number'] = 'BAD NUMBER';
ids['pay-form'].attrs['data-msg-missing-holder'] = 'NO HOLDER';
global.document = {getElementById: id => ids[id] || null, createElement: tag => el(tag.toUpperCase())};
global.window = el('WINDOW');
`
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "payment.js"), []byte(paymentJS), 0o600); err != nil {
		t.Fatal(err)
	}
	y := time.Now().UTC().Year() + 2
	script := dom + `
require('./payment.js');
const f = ids['pay-form'], num = ids['card-number'], err = ids['form-error'];
num.value = '3782 8224';
num.fire('input');
const brand1 = ids['card-brand'].attrs['data-brand'], text1 = ids['card-brand'].textContent;
let ev = f.fire('submit');
const r1 = {prevented: ev.defaultPrevented, hidden: err.hidden, msgs: err.children.map(c => c.textContent),
  invalid: num.attrs['aria-invalid'], focused: global.focused === ids['card-holder'], noValidate: f.noValidate};
ids['card-holder'].value = 'Ana';
num.value = '4242 4242 4242 4242';
num.fire('input');
ids['expiry-month'].value = '01';
ids['expiry-year'].value = '` + strconv.Itoa(y) + `';
ids['security-code'].value = '123';
ev = f.fire('submit');
const r2 = {prevented: ev.defaultPrevented, hidden: err.hidden, number: num.value, disabled: ids['pay-button'].disabled, brand: ids['card-brand'].attrs['data-brand']};
ev = f.fire('submit');
process.stdout.write(JSON.stringify({brand1, text1, r1, r2, again: ev.defaultPrevented}));
`
	main := filepath.Join(dir, "main.js")
	if err := os.WriteFile(main, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, main).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got struct {
		Brand1, Text1 string
		R1            struct {
			Prevented, Hidden, Focused, NoValidate bool
			Msgs                                   []string
			Invalid                                string
		}
		R2 struct {
			Prevented, Hidden, Disabled bool
			Number, Brand               string
		}
		Again bool
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Brand1 != "amex" || got.Text1 != "Amex" {
		t.Errorf("brand while typing = %q/%q", got.Brand1, got.Text1)
	}
	r1 := got.R1
	if !r1.Prevented || r1.Hidden || !r1.Focused || !r1.NoValidate || r1.Invalid != "true" || len(r1.Msgs) != 4 ||
		r1.Msgs[0] != "NO HOLDER" || r1.Msgs[1] != "BAD NUMBER" || r1.Msgs[2] != "invalid_expiry" {
		t.Errorf("invalid submit: %+v", r1)
	}
	r2 := got.R2
	if r2.Prevented || !r2.Hidden || r2.Number != "4242424242424242" || !r2.Disabled || r2.Brand != "visa" {
		t.Errorf("valid submit: %+v", r2)
	}
	if !got.Again {
		t.Error("second submit not blocked")
	}
}
