package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/notify"
)

// runVerifyNotification checks a notification as a merchant would receive it:
// the body's encryption_data always, and the Standard Webhooks headers when
// they are given. It prints "valid" or returns an error naming what failed.
func runVerifyNotification(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("verify-notification", flag.ContinueOnError)
	key := fs.String("key", "", "the account's sign_key")
	keyFile := fs.String("key-file", "", "a JSON file with a sign_key field, such as .data/demo-merchant.json")
	bodyFile := fs.String("body", "-", "file holding the exact notification body, - for stdin")
	id := fs.String("id", "", "webhook-id header")
	timestamp := fs.String("timestamp", "", "webhook-timestamp header")
	signature := fs.String("signature", "", "webhook-signature header (space-separated v1,<sig> entries)")
	headersFile := fs.String("headers", "", `file of raw "Name: value" header lines (instead of -id, -timestamp, -signature)`)
	tolerance := fs.Duration("tolerance", notify.DefaultTolerance, "how far webhook-timestamp may be from now")
	nowFlag := fs.String("now", "", "the time to check the timestamp against, RFC 3339 (default: the current time)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: paygate verify-notification (-key KEY | -key-file FILE) [-body FILE|-]\n"+
			"         [-id ID -timestamp TS -signature SIG | -headers FILE] [-tolerance 5m] [-now RFC3339]\n\n"+
			"Without headers only the body's encryption_data is checked; with them, both.\n"+
			"The body must be the exact bytes received: a trailing newline changes the webhook signature.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	k := *key
	if *keyFile != "" {
		if k != "" {
			return errors.New("give -key or -key-file, not both")
		}
		var err error
		if k, err = readSignKey(*keyFile); err != nil {
			return err
		}
	}
	if k == "" {
		fs.Usage()
		return errors.New("a key is needed: -key or -key-file")
	}

	var h http.Header
	headerFlags := *id != "" || *timestamp != "" || *signature != ""
	switch {
	case headerFlags && *headersFile != "":
		return errors.New("give -id/-timestamp/-signature or -headers, not both")
	case headerFlags:
		if *id == "" || *timestamp == "" || *signature == "" {
			return errors.New("-id, -timestamp and -signature go together")
		}
		h = http.Header{}
		h.Set(notify.HeaderID, *id)
		h.Set(notify.HeaderTimestamp, *timestamp)
		h.Set(notify.HeaderSignature, *signature)
	case *headersFile != "":
		b, err := os.ReadFile(*headersFile)
		if err != nil {
			return err
		}
		if h, err = parseHeaderLines(b); err != nil {
			return fmt.Errorf("%s: %w", *headersFile, err)
		}
	}

	now := time.Now()
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339, *nowFlag)
		if err != nil {
			return fmt.Errorf("-now: %w", err)
		}
		now = t
	}

	var body []byte
	var err error
	if *bodyFile == "-" {
		body, err = io.ReadAll(stdin)
	} else {
		body, err = os.ReadFile(*bodyFile)
	}
	if err != nil {
		return fmt.Errorf("reading the body: %w", err)
	}
	if len(body) == 0 {
		return errors.New("the body is empty")
	}

	if h != nil {
		if err := notify.VerifyHeaders(k, h, body, now, *tolerance); err != nil {
			if errors.Is(err, notify.ErrBadSignature) && bytes.HasSuffix(body, []byte("\n")) {
				return fmt.Errorf("webhook headers: %w (the body ends with a newline; the signature covers the exact bytes received)", err)
			}
			return fmt.Errorf("webhook headers: %w", err)
		}
	}
	if err := notify.VerifyBody(k, body); err != nil && (h == nil || !errors.Is(err, notify.ErrHeadersOnly)) {
		return fmt.Errorf("body: %w", err)
	}
	_, err = fmt.Fprintln(stdout, "valid")
	return err
}

// parseHeaderLines reads raw "Name: value" lines, such as a copy of a
// request's headers. A leading request or status line is skipped, a blank
// line ends the headers, and a repeated name keeps every value.
func parseHeaderLines(b []byte) (http.Header, error) {
	h := http.Header{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			if len(h) > 0 {
				break
			}
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(name, " \t") {
			if len(h) == 0 && (strings.Contains(line, "HTTP/")) {
				continue // request or status line
			}
			return nil, fmt.Errorf("line %d: want Name: value, got %q", n, line)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return h, nil
}
