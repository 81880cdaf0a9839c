package signing

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

type vector struct {
	Operation      string      `json:"operation"`
	Fields         [][2]string `json:"fields"`
	SignKey        string      `json:"sign_key"`
	EncryptionData string      `json:"encryption_data"`
}

func (v vector) values() []string {
	vals := make([]string, len(v.Fields))
	for i, f := range v.Fields {
		vals[i] = f[1]
	}
	return vals
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/signature-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []vector `json:"vectors"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) == 0 {
		t.Fatal("no vectors in testdata/signature-vectors.json")
	}
	return file.Vectors
}

func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Operation, func(t *testing.T) {
			vals := v.values()
			var got string
			switch v.EncryptionData {
			case strings.ToLower(v.EncryptionData):
				got = Sign(v.SignKey, vals...)
			case strings.ToUpper(v.EncryptionData):
				got = SignUpper(v.SignKey, vals...)
			default:
				t.Fatalf("vector encryption_data %q has mixed case", v.EncryptionData)
			}
			if got != v.EncryptionData {
				t.Errorf("signature = %s, want %s", got, v.EncryptionData)
			}
			for _, sig := range []string{v.EncryptionData, strings.ToLower(v.EncryptionData), strings.ToUpper(v.EncryptionData)} {
				if !Verify(v.SignKey, sig, vals...) {
					t.Errorf("Verify(%s) = false, want true", sig)
				}
			}
		})
	}
}

// flip returns s with the character at i replaced by a different one.
func flip(s string, i int) string {
	c := byte('a')
	if s[i] == 'a' {
		c = 'b'
	}
	return s[:i] + string(c) + s[i+1:]
}

func TestVerifyRejectsChanges(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Operation, func(t *testing.T) {
			vals := v.values()
			for i := range vals {
				changed := append([]string(nil), vals...)
				changed[i] = flip(strings.TrimSpace(changed[i]), 0)
				if Verify(v.SignKey, v.EncryptionData, changed...) {
					t.Errorf("Verify with value %d (%s) changed = true, want false", i, v.Fields[i][0])
				}
			}
			if Verify(flip(v.SignKey, len(v.SignKey)-1), v.EncryptionData, vals...) {
				t.Error("Verify with changed key = true, want false")
			}
			for _, i := range []int{0, 31, 63} {
				if Verify(v.SignKey, flip(v.EncryptionData, i), vals...) {
					t.Errorf("Verify with signature character %d changed = true, want false", i)
				}
			}
			if Verify(v.SignKey, v.EncryptionData, vals[:len(vals)-1]...) {
				t.Error("Verify with a value missing = true, want false")
			}
		})
	}
}

func TestVerifyMalformedSignature(t *testing.T) {
	const key = "k3y-for-tests-0123456789abcdef"
	good := Sign(key, "10086", "10086001")
	tests := []struct {
		name string
		sig  string
	}{
		{"empty", ""},
		{"too short", good[:63]},
		{"too long", good + "0"},
		{"padded", " " + good[:63]},
		{"surrounding whitespace", " " + good + " "},
		{"non-hex", "zz" + good[2:]},
		{"raw digest length", good[:32]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if Verify(key, tt.sig, "10086", "10086001") {
				t.Errorf("Verify(%q) = true, want false", tt.sig)
			}
		})
	}
}

func TestSign(t *testing.T) {
	const key = "k3y-for-tests-0123456789abcdef"
	tests := []struct {
		name string
		key  string
		vals []string
		want string
	}{
		// Precomputed with: printf '%s' '10086' '10086001' "$key" | sha256sum
		{"retrievalTrans", key, []string{"10086", "10086001"}, "46d5224b05c84a006b32e00a3254269a09562023846c554ebc94230ff911f7a8"},
		{"trimmed key", " " + key + "\n", []string{"10086", "10086001"}, "46d5224b05c84a006b32e00a3254269a09562023846c554ebc94230ff911f7a8"},
		{"trimmed values", key, []string{"\t10086 ", " 10086001\r\n"}, "46d5224b05c84a006b32e00a3254269a09562023846c554ebc94230ff911f7a8"},
		{"split values concatenate", key, []string{"1008", "610086001"}, "46d5224b05c84a006b32e00a3254269a09562023846c554ebc94230ff911f7a8"},
		// sha256 of the empty string.
		{"nothing", "", nil, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sign(tt.key, tt.vals...); got != tt.want {
				t.Errorf("Sign = %s, want %s", got, tt.want)
			}
			if got, want := SignUpper(tt.key, tt.vals...), strings.ToUpper(tt.want); got != want {
				t.Errorf("SignUpper = %s, want %s", got, want)
			}
		})
	}
}
