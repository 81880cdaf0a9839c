package integration

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/paygate/paygate/workflows"
)

// TestCardDataNeverStoredInTheClear pays with a card, then reads every event
// of the order's workflow history, every row of every table and every log
// line, and finds neither the card number nor the security code.
func TestCardDataNeverStoredInTheClear(t *testing.T) {
	ctx := context.Background()
	creds := env.auto
	const pan, cvv = "5555555555554444", "913"
	orders := map[string]string{} // order_no → expected result
	for _, tc := range []struct{ pan, result string }{
		{pan, "0000:Success"},
		{"4000000000000002", "A0001:Declined"},
		{"4000000000000341", "0000:Success"},
	} {
		orderNo := newOrderNo(t)
		f := cardOrder(creds, orderNo, tc.pan)
		f["security_code"] = cvv
		_, r := authorise(t, signCard(f, creds.SignKey))
		if r.ResultInfo != tc.result {
			t.Fatalf("payment %s: %s", tc.pan, r.ResultInfo)
		}
		orders[orderNo] = tc.pan
	}
	cvvToken := regexp.MustCompile(`(^|[^0-9A-Za-z])` + cvv + `([^0-9A-Za-z]|$)`)
	check := func(where, text string, pans ...string) {
		t.Helper()
		for _, p := range pans {
			if strings.Contains(text, p) {
				t.Errorf("%s holds the card number %s", where, p)
			}
		}
		if loc := cvvToken.FindStringIndex(text); loc != nil {
			start := max(0, loc[0]-60)
			t.Errorf("%s holds the security code: …%s…", where, text[start:min(len(text), loc[1]+60)])
		}
	}

	for orderNo, p := range orders {
		id := workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo)
		iter := env.temporal.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		events := 0
		var sb strings.Builder
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				t.Fatalf("history of %s: %v", id, err)
			}
			b, err := protojson.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			sb.Write(b)
			events++
		}
		if events < 5 {
			t.Fatalf("history of %s has %d events", id, events)
		}
		// Payloads are base64 inside protojson and encrypted; decode and
		// decrypt them too (encrypted_histories_test.go). The masked card
		// must be found there, which shows the decoding works.
		all := sb.String() + decodedPayloads(sb.String()) + decryptedPayloads(t, id)
		if masked := p[:6] + "******" + p[12:]; !strings.Contains(all, masked) {
			t.Errorf("history of %s: masked card %s not found, payload decoding is broken", orderNo, masked)
		}
		check("workflow history of "+orderNo, all, p)
	}

	var tables []string
	if err := env.gw.DB.Raw(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables).Error; err != nil {
		t.Fatal(err)
	}
	if len(tables) < 4 {
		t.Fatalf("found tables %v", tables)
	}
	for _, table := range tables {
		var rows []string
		if err := env.gw.DB.Raw(`SELECT t::text FROM ` + quoteIdent(table) + ` t`).Scan(&rows).Error; err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		for _, p := range []string{pan, "4000000000000002", "4000000000000341"} {
			if strings.Contains(strings.Join(rows, "\n"), p) {
				t.Errorf("table %s holds the card number %s", table, p)
			}
		}
		// A security code would be written as text; a row id or an
		// amount that happens to read 913 is not one.
		var textCols []string
		if err := env.gw.DB.Raw(`SELECT column_name FROM information_schema.columns
			WHERE table_schema = 'public' AND table_name = ? AND data_type NOT IN
			('smallint', 'integer', 'bigint', 'numeric', 'real', 'double precision', 'boolean',
			 'timestamp with time zone', 'timestamp without time zone', 'date', 'interval', 'uuid')`, table).Scan(&textCols).Error; err != nil {
			t.Fatalf("columns of %s: %v", table, err)
		}
		if len(textCols) == 0 {
			continue
		}
		exprs := make([]string, len(textCols))
		for i, c := range textCols {
			exprs[i] = quoteIdent(c) + "::text"
		}
		var texts []string
		if err := env.gw.DB.Raw(`SELECT concat_ws(' | ', ` + strings.Join(exprs, ", ") + `) FROM ` + quoteIdent(table)).Scan(&texts).Error; err != nil {
			t.Fatalf("read the text of %s: %v", table, err)
		}
		check("table "+table, strings.Join(texts, "\n"))
	}
	check("the gateway's logs", env.logs.String(), pan, "4000000000000002", "4000000000000341")
}

var base64Run = regexp.MustCompile(`"data":"([A-Za-z0-9+/=]+)"`)

func decodedPayloads(s string) string {
	var sb strings.Builder
	for _, m := range base64Run.FindAllStringSubmatch(s, -1) {
		if b, err := decodeB64(m[1]); err == nil {
			sb.Write(b)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
