package order

import (
	"reflect"
	"slices"
	"testing"
)

// keptInClear are the order fields stored in clear: what the books, the
// interface's answers and the console need, and nothing that names or
// locates a person. A new field of Details must be placed here or in
// Personal.
var keptInClear = []string{
	"merchant_id", "account_id", "order_no", "currency", "amount",
	"item_total", "shipping", "handling", "tax_total", "insurance", "shipping_discount", "discount",
	"website", "items", "shopper_level", "open3d", "token_flag", "token_id",
	"notify_url", "return_url", "cancel_url", "billing_country", "delivery_country",
	"os", "browser", "browser_lang", "time_zone", "resolution", "color_depth", "challenge_window_size",
	"installments", "installments_id", "platform_source", "device_type", "order_type", "checkout_time",
	"cart_items", "total_discount", "additional_information",
	"price_id", "quote_id", "quote_price", "storefront_domains", "accept", "subscription",
	"payment_method", "bank_code", "default_lang",
}

func jsonNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("json")
		for j, c := range name {
			if c == ',' {
				name = name[:j]
				break
			}
		}
		names = append(names, name)
	}
	return names
}

// TestEveryFieldIsPlaced: each field of Details is either personal or kept
// in clear on purpose, never both and never neither.
func TestEveryFieldIsPlaced(t *testing.T) {
	personal := jsonNames(reflect.TypeFor[Personal]())
	details := jsonNames(reflect.TypeFor[Details]())
	for _, name := range details {
		p, c := slices.Contains(personal, name), slices.Contains(keptInClear, name)
		switch {
		case p && c:
			t.Errorf("%s is both personal and kept in clear", name)
		case !p && !c:
			t.Errorf("%s is neither personal nor kept in clear: place it", name)
		}
	}
	for _, name := range personal {
		if !slices.Contains(details, name) {
			t.Errorf("personal field %s is not a field of Details", name)
		}
	}
}

// fill sets every settable string, Text, slice and pointer field of v to a
// non-zero value, recursively.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x-" + v.Type().Name())
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i))
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	}
}

func TestTakePersonalLeavesNothingPersonalAndPutRestores(t *testing.T) {
	var full Details
	fill(reflect.ValueOf(&full).Elem())
	d := full
	p := d.TakePersonal()

	// Every personal field was taken: Personal's fields are all non-zero
	// and the same-named fields of d are all zero.
	pv, dv := reflect.ValueOf(p), reflect.ValueOf(d)
	for i := range pv.NumField() {
		name := pv.Type().Field(i).Name
		if pv.Field(i).IsZero() {
			t.Errorf("Personal.%s was not taken", name)
		}
		if !dv.FieldByName(name).IsZero() {
			t.Errorf("Details.%s still holds personal data", name)
		}
	}
	// What is kept in clear stays.
	if d.OrderNo != full.OrderNo || d.NotifyURL != full.NotifyURL || d.PaymentMethod != full.PaymentMethod {
		t.Errorf("kept fields changed: %+v", d)
	}
	d.PutPersonal(p)
	if !reflect.DeepEqual(d, full) {
		t.Errorf("PutPersonal did not restore the order:\n got %+v\nwant %+v", d, full)
	}
}
