package api

// What the external tests (package api_test) use of this package's tests.
var (
	RecordCorpus = recordCorpus
	UpdateCorpus = updateCorpus
)

// CorpusFile holds the recorded answers.
const CorpusFile = corpusFile

// SetTestCapabilities makes every test server serve the capabilities f
// gives it; ops is the test's fake of the order operations.
func SetTestCapabilities(f func(s *Server, ops any) []Capability) { testCapabilities = f }
