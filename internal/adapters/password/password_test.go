package password

import (
	"strings"
	"testing"
)

func TestHashAndCheck(t *testing.T) {
	h, err := Hash("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %s is not argon2id in PHC format with the set parameters", h)
	}
	if h2, _ := Hash("correct horse battery"); h2 == h {
		t.Error("two hashes of one password are equal: no salt")
	}
	tests := []struct {
		name    string
		hash    string
		pw      string
		want    bool
		wantErr bool
	}{
		{"the password", h, "correct horse battery", true, false},
		{"another password", h, "correct horse batterY", false, false},
		{"empty password", h, "", false, false},
		{"not a PHC string", "plain", "x", false, true},
		{"another algorithm", strings.Replace(h, "argon2id", "argon2i", 1), "correct horse battery", false, true},
		{"absurd memory", strings.Replace(h, "m=19456", "m=99999999", 1), "correct horse battery", false, true},
		{"bad salt", strings.Replace(h, "$m=19456,t=2,p=1$", "$m=19456,t=2,p=1$!!", 1), "correct horse battery", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := Check(tc.hash, tc.pw)
			if ok != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("Check = %v, %v; want %v, error %v", ok, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestWeakPasswordsAreRefused(t *testing.T) {
	tests := []struct {
		name string
		pw   string
	}{
		{"empty", ""},
		{"eleven characters", "abcdefghijk"},
		{"too long", strings.Repeat("a", MaxLength+1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Hash(tc.pw); err != ErrWeak {
				t.Errorf("Hash = %v, want ErrWeak", err)
			}
		})
	}
	if ok, err := Check(Dummy, "anything at all"); ok || err != nil {
		t.Errorf("the dummy hash matched or failed: %v %v", ok, err)
	}
}
