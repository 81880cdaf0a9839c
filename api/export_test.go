package api

// What the external tests (package api_test) use of this package's tests.
var (
	RecordCorpus = recordCorpus
	UpdateCorpus = updateCorpus
)

// CorpusFile holds the recorded answers.
const CorpusFile = corpusFile

// SetTestCapabilities makes every test server serve the capabilities f
// gives it.
func SetTestCapabilities(f func(*Server) []Capability) { testCapabilities = f }
