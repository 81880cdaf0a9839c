package api

// What the external tests (package api_test) use of this package's tests.
var (
	RecordCorpus = recordCorpus
	UpdateCorpus = updateCorpus
)

// CorpusFile holds the recorded answers.
const CorpusFile = corpusFile

// TestDoubles are the fakes a test server's capabilities run on: the order
// operations of the batches, and the orders and vault of the payments.
// Each is the type the capability's interface wants (the tests' fakes).
type TestDoubles struct{ Ops, Orders, Vault any }

// SetTestCapabilities makes every test server serve the capabilities f
// gives it over the test's doubles.
func SetTestCapabilities(f func(s *Server, d TestDoubles) []Capability) { testCapabilities = f }

// RoutesOf are the routes of s's router, as method and path.
func RoutesOf(s *Server) [][2]string {
	var out [][2]string
	for _, r := range s.engine().Routes() {
		out = append(out, [2]string{r.Method, r.Path})
	}
	return out
}
