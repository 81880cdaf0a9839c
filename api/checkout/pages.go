// Package checkout renders the shopper-facing HTML pages of the hosted
// payment: the forwarding page answered to the merchant's checkout request,
// the payment page with the card form, the redirect pages (return_url and
// cancel_url hand-off, 3-D Secure ACS) and simple message pages.
//
// Pages are self-contained: CSS and JavaScript are inlined from embedded
// files, nothing is loaded from elsewhere. Every visible text goes through
// Message. The card form posts; no card value is ever rendered into a page.
package checkout

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/style.css
var styleCSS string

//go:embed static/payment.js
var paymentJS string

//go:embed static/autosubmit.js
var autosubmitJS string

var pages = template.Must(template.New("pages").Funcs(template.FuncMap{
	"msg":        Message,
	"brandLabel": brandLabel,
}).ParseFS(templateFS, "templates/*.html"))

// now is the clock of the payment page's year list; tests replace it.
var now = time.Now

// yearsAhead is how many years after the current one the expiry year list
// offers.
const yearsAhead = 15

// brandLabels are the display names of the card brands of internal/domain/card.
// Each contains its code case-insensitively.
var brandLabels = map[string]string{
	"visa":       "Visa",
	"mastercard": "Mastercard",
	"amex":       "Amex",
	"discover":   "Discover",
	"jcb":        "JCB",
	"unionpay":   "UnionPay",
	"diners":     "Diners Club",
	"maestro":    "Maestro",
}

func brandLabel(code string) string {
	if l, ok := brandLabels[strings.ToLower(code)]; ok {
		return l
	}
	return code
}

// page is what every template receives: the page's own data plus the
// normalised language and the inline assets.
type page struct {
	Lang  string
	Title string
	CSS   template.CSS
	JS    template.JS
	Data  any
}

func render(w io.Writer, name, lang, title string, js string, data any) error {
	return pages.ExecuteTemplate(w, name, page{
		Lang:  lang,
		Title: title,
		CSS:   template.CSS(styleCSS),
		JS:    template.JS(js),
		Data:  data,
	})
}

// RenderForwarding writes the forwarding page: a form posting every field to
// d.Action, submitted by a script on load, with a button for browsers
// without JavaScript. Its language follows a default_lang field, if any.
func RenderForwarding(w io.Writer, d ForwardingData) error {
	lang := "en"
	for _, f := range d.Fields {
		if f.Name == "default_lang" && f.Value != "" {
			lang = normLang(f.Value)
			break
		}
	}
	form := autoForm{Action: d.Action, Method: "post", Fields: d.Fields, Message: Message(lang, "redirecting")}
	return render(w, "autoform", lang, Message(lang, "redirecting"), autosubmitJS, form)
}

// autoForm is the data of the auto-submitting page.
type autoForm struct {
	Action, Method, Message string
	Fields                  []Field
}

// ResultPageData describes a page that sends the shopper on with an
// auto-submitting form: the return_url/cancel_url hand-off or the 3-D Secure
// ACS redirect.
type ResultPageData struct {
	Lang, Title, Message, Target, Method string
	Fields                               []Field
}

// RenderRedirect writes a page whose form sends Fields to Target by Method
// ("POST", or GET for anything else) as soon as it loads, with a continue
// button for browsers without JavaScript. A GET form replaces the query of
// its action, so for GET the query parameters already in Target are carried
// as hidden fields ahead of Fields. Title and Message default to the
// "redirecting" text.
func RenderRedirect(w io.Writer, d ResultPageData) error {
	lang := normLang(d.Lang)
	title, message := d.Title, d.Message
	if title == "" {
		title = Message(lang, "redirecting")
	}
	if message == "" {
		message = Message(lang, "redirecting")
	}
	form := autoForm{Action: d.Target, Method: "get", Message: message}
	if strings.EqualFold(strings.TrimSpace(d.Method), "post") {
		form.Method = "post"
		form.Fields = d.Fields
	} else {
		form.Action, form.Fields = splitQuery(d.Target, d.Fields)
	}
	return render(w, "autoform", lang, title, autosubmitJS, form)
}

// splitQuery moves the query of a GET form's target into hidden fields, which
// come first, in the query's order.
func splitQuery(target string, fields []Field) (string, []Field) {
	i := strings.IndexByte(target, '?')
	if i < 0 {
		return target, fields
	}
	base, rest := target[:i], target[i+1:]
	fragment := ""
	if j := strings.IndexByte(rest, '#'); j >= 0 {
		rest, fragment = rest[:j], rest[j:]
	}
	var out []Field
	for _, pair := range strings.Split(rest, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			// Not a query we can split faithfully: leave the target alone.
			return target, fields
		}
		out = append(out, Field{Name: k, Value: v})
	}
	return base + fragment, append(out, fields...)
}

// RenderMessage writes a simple page with a title and a message (expired
// session, error). Both are shown as given: the caller translates them.
func RenderMessage(w io.Writer, lang, title, message string) error {
	lang = normLang(lang)
	return render(w, "message", lang, title, "", struct{ Title, Message string }{title, message})
}

// Item is one line item of an order.
type Item struct{ Name, Code, Price, Quantity string }

// ParseItems reads the interface's items format: entries joined by "#;#",
// segments inside an entry joined by "#,#", in the order name, code, unit
// price, quantity. Segments are trimmed; missing segments are empty and
// segments after the fourth are ignored. Entries whose segments are all
// empty are skipped, so an empty string gives no items.
func ParseItems(s string) []Item {
	var items []Item
	for _, entry := range strings.Split(s, "#;#") {
		seg := strings.Split(entry, "#,#")
		var v [4]string
		empty := true
		for i := 0; i < len(seg) && i < len(v); i++ {
			v[i] = strings.TrimSpace(seg[i])
			if v[i] != "" {
				empty = false
			}
		}
		if empty {
			continue
		}
		items = append(items, Item{Name: v[0], Code: v[1], Price: v[2], Quantity: v[3]})
	}
	return items
}

// PaymentPageData is the shopper's payment page.
type PaymentPageData struct {
	Lang                    string // "en" or "es"; anything else falls back to "en"
	Session                 string // opaque checkout session id, posted back with the card form
	MerchantName            string
	OrderNo                 string
	Amount, Currency        string // display amount, e.g. "59.90", "USD"
	Items                   []Item // from the items field
	PayAction, CancelAction string // "/v1/checkout/pay", "/v1/checkout/cancel"
	Error                   string // a server-side message shown above the form, already translated
	Brands                  []string
	// Methods are the ways to pay the page offers, best first as
	// /v1/optimise ranks them: the card form and each alternative payment
	// method, which posts to APMAction. Without any, the page offers the
	// card alone.
	Methods   []PageMethod
	APMAction string // "/v1/checkout/apm"
}

// PageMethod is one way to pay on the payment page.
type PageMethod struct {
	// Name is CARD or the APM's name (PIX, OXXO, IDEAL).
	Name string
	// AskDocument and Banks say what the APM needs that the order lacks:
	// the shopper's tax id, and a choice of bank (iDEAL).
	AskDocument bool
	Banks       []string
}

// IsCard reports whether the method is the card form.
func (m PageMethod) IsCard() bool { return m.Name == "CARD" }

// paymentPage adds the select options to the payment page's data.
type paymentPage struct {
	PaymentPageData
	Months, Years []string
}

// RenderPaymentPage writes the payment page: order summary, card form
// posting to PayAction and a cancel form posting to CancelAction. No card
// field is ever pre-filled.
func RenderPaymentPage(w io.Writer, d PaymentPageData) error {
	lang := normLang(d.Lang)
	d.Lang = lang
	p := paymentPage{PaymentPageData: d}
	for m := 1; m <= 12; m++ {
		p.Months = append(p.Months, twoDigits(m))
	}
	y := now().UTC().Year()
	for i := 0; i <= yearsAhead; i++ {
		p.Years = append(p.Years, strconv.Itoa(y+i))
	}
	return render(w, "payment", lang, Message(lang, "pay_title"), paymentJS, p)
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// ContentSecurityPolicy returns a Content-Security-Policy header value that
// fits these pages: nothing loads from anywhere, only the pages' own inline
// script and style run (allowed by hash), and forms may post to 'self' plus
// the given sources (for a redirect page, the target's origin, e.g.
// "https://shop.example").
func ContentSecurityPolicy(formActions ...string) string {
	actions := append([]string{"'self'"}, formActions...)
	return "default-src 'none'; script-src " + hashSource(paymentJS) + " " + hashSource(autosubmitJS) +
		"; style-src " + hashSource(styleCSS) +
		"; img-src data:; base-uri 'none'; frame-ancestors 'none'; form-action " + strings.Join(actions, " ")
}

func hashSource(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}
