// Package disputes is the dispute capability of the merchant API: POST
// /v1/dispute lists an account's disputes, reads one, sends its evidence or
// accepts it.
package disputes

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/dispute"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// Records is the record as the dispute capability uses it (models.Records).
type Records interface {
	ListDisputes(ctx context.Context, merchantID, accountID string, limit int) ([]models.Dispute, error)
	FindDispute(ctx context.Context, merchantID, accountID, id string) (*models.Dispute, error)
	AddDisputeEvidence(ctx context.Context, e *models.DisputeEvidence) (bool, error)
	RemoveDisputeEvidence(ctx context.Context, disputeID string, ids []string) error
}

// Answers sends the merchant's answers to disputes' workflows
// (flows.TemporalDisputes).
type Answers interface {
	Answer(ctx context.Context, connector, disputeID, update string) (workflows.DisputeState, error)
}

// Handler serves the dispute route.
type Handler struct {
	Gate    *api.Server
	Records Records
	Answers Answers
}

// New is the dispute capability of gate.
func New(gate *api.Server, records Records, answers Answers) *Handler {
	return &Handler{Gate: gate, Records: records, Answers: answers}
}

// Routes puts the dispute route on the merchant API's /v1 group.
func (h *Handler) Routes(v1 gin.IRoutes) { v1.POST("/dispute", h.dispute) }

var _ api.EncryptionDataRequired = (*disputeRequest)(nil)

// The actions of POST /v1/dispute.
const (
	actionList     = "list"
	actionQuery    = "query"
	actionEvidence = "evidence"
	actionAccept   = "accept"
)

// Limits of the evidence.
const (
	maxPieces   = 10
	maxText     = 20000 // characters of one text
	maxFile     = 512 << 10
	maxName     = 64
	listLimit   = 100
	evidenceKey = "evidence"
)

// fileTypes are the files a dispute's evidence may hold, by the type the
// merchant declares, which the content must be.
var fileTypes = []string{"application/pdf", "image/png", "image/jpeg", "text/plain; charset=utf-8"}

// disputeRequest is the body of POST /v1/dispute, signed over merchant_id,
// account_id, dispute_id, action and, for evidence, evidence_sha256: the
// hex SHA-256 of the evidence array exactly as sent. The action is signed,
// so a signature seen on a read is no good for an answer.
type disputeRequest struct {
	MerchantID     string          `json:"merchant_id"`
	AccountID      string          `json:"account_id"`
	DisputeID      string          `json:"dispute_id"`
	Action         string          `json:"action"`
	Evidence       json.RawMessage `json:"evidence"`
	EvidenceSHA256 string          `json:"evidence_sha256"`
	EncryptionData string          `json:"encryption_data"`
}

func (r *disputeRequest) Trim() {
	for _, p := range []*string{&r.MerchantID, &r.AccountID, &r.DisputeID, &r.Action, &r.EvidenceSHA256, &r.EncryptionData} {
		*p = strings.TrimSpace(*p)
	}
}

func (r *disputeRequest) Echo() api.Echo {
	return api.Echo{MerchantID: r.MerchantID, AccountID: r.AccountID}
}

func (r *disputeRequest) Signature() string { return r.EncryptionData }

func (r *disputeRequest) SignedValues() []string {
	return []string{r.MerchantID, r.AccountID, r.DisputeID, r.Action, r.EvidenceSHA256}
}

func (r *disputeRequest) RequiresEncryptionData() {}

// piece is one piece of evidence as the merchant sends it: a text, or a
// file in base64 with its type.
type piece struct {
	Name          string `json:"name"`
	Text          string `json:"text"`
	ContentType   string `json:"content_type"`
	ContentBase64 string `json:"content_base64"`
}

// disputeView is a dispute as the answer shows it.
type disputeView struct {
	DisputeID     string `json:"dispute_id"`
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no"`
	Stage         string `json:"stage"`
	Status        string `json:"status"`
	Reason        string `json:"reason"`
	Currency      string `json:"currency"`
	Amount        string `json:"amount"`
	Fee           string `json:"fee"`
	EvidenceDueBy string `json:"evidence_due_by"`
	CreatedAt     string `json:"created_at"`
}

// disputeAnswer is the answer of POST /v1/dispute, signed over
// merchant_id, account_id, each dispute's dispute_id and status in order,
// and result_info.
type disputeAnswer struct {
	MerchantID     string        `json:"merchant_id"`
	AccountID      string        `json:"account_id"`
	Disputes       []disputeView `json:"disputes"`
	ResultInfo     string        `json:"result_info"`
	EncryptionData string        `json:"encryption_data"`
}

func viewOf(d models.Dispute) disputeView {
	v := disputeView{DisputeID: d.ID, TransactionID: d.TransactionID, OrderNo: d.OrderNo, Stage: d.Stage, Status: d.Status,
		Reason: d.Reason, Currency: d.Currency, Amount: money.FromMinor(d.Amount, d.Currency).String(),
		Fee: money.FromMinor(d.Fee, d.Currency).String(), CreatedAt: d.CreatedAt.UTC().Format(time.RFC3339)}
	if d.EvidenceDue != nil && d.Status == "needs_response" {
		v.EvidenceDueBy = d.EvidenceDue.UTC().Format(time.RFC3339)
	}
	return v
}

// dispute handles POST /v1/dispute.
func (h *Handler) dispute(c *gin.Context) {
	var req disputeRequest
	m, ok := h.Gate.AcceptMerchant(c, api.JSONAnswers, &req)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	switch {
	case req.Action == "":
		m.Refuse(codes.MissingField.With("action"))
		return
	case !slices.Contains([]string{actionList, actionQuery, actionEvidence, actionAccept}, req.Action):
		m.Refuse(codes.InvalidField.With("action must be list, query, evidence or accept"))
		return
	case req.Action == actionList && req.DisputeID != "":
		m.Refuse(codes.InvalidField.With("dispute_id is not taken by list"))
		return
	case req.Action != actionList && req.DisputeID == "":
		m.Refuse(codes.MissingField.With("dispute_id"))
		return
	case h.Records == nil:
		m.Refuse(codes.SystemError)
		return
	}
	if req.Action == actionList {
		list, err := h.Records.ListDisputes(ctx, req.MerchantID, req.AccountID, listLimit)
		if err != nil {
			h.Gate.Logger.Error("list disputes", "error", err)
			m.Refuse(codes.SystemError)
			return
		}
		h.answer(c, m, req, list)
		return
	}
	d, err := h.Records.FindDispute(ctx, req.MerchantID, req.AccountID, req.DisputeID)
	switch {
	case errors.Is(err, models.ErrDisputeNotFound):
		m.Refuse(codes.DisputeNotFound)
		return
	case err != nil:
		h.Gate.Logger.Error("find dispute", "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	if req.Action == actionQuery {
		h.answer(c, m, req, []models.Dispute{*d})
		return
	}
	if h.Answers == nil {
		m.Refuse(codes.SystemError)
		return
	}
	if d.Status != "needs_response" {
		m.Refuse(codes.DisputeNotAnswerable.With("it is " + d.Status))
		return
	}
	update := workflows.UpdateAcceptDispute
	var added []string // the pieces this answer stored first
	if req.Action == actionEvidence {
		pieces, code := readEvidence(req)
		if code != nil {
			m.Refuse(*code)
			return
		}
		for _, p := range pieces {
			p.DisputeID = d.ID
			isNew, err := h.Records.AddDisputeEvidence(ctx, p)
			if err != nil {
				h.Gate.Logger.Error("store dispute evidence", "dispute", d.ID, "error", err)
				m.Refuse(codes.SystemError)
				return
			}
			if isNew {
				added = append(added, p.ID)
			}
		}
		update = workflows.UpdateDisputeEvidence
	}
	_, err = h.Answers.Answer(ctx, d.Connector, d.ConnectorRef, update)
	switch {
	case errors.Is(err, flows.ErrDisputeNotAnswerable):
		// The pieces of an answer not taken are not kept: a later answer
		// sends every piece kept, and would send a refused file again.
		if err := h.Records.RemoveDisputeEvidence(ctx, d.ID, added); err != nil {
			h.Gate.Logger.Error("remove refused dispute evidence", "dispute", d.ID, "error", err)
			m.Refuse(codes.SystemError)
			return
		}
		if errors.Is(err, flows.ErrAnswerRefused) && req.Action == actionEvidence && h.stillWaits(ctx, req) {
			m.Refuse(codes.EvidenceRefused)
			return
		}
		m.Refuse(codes.DisputeNotAnswerable)
		return
	case err != nil:
		h.Gate.Logger.Error("answer dispute", "dispute", d.ID, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	if d, err = h.Records.FindDispute(ctx, req.MerchantID, req.AccountID, req.DisputeID); err != nil {
		h.Gate.Logger.Error("find dispute", "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	h.answer(c, m, req, []models.Dispute{*d})
}

// stillWaits reports whether the dispute, as its workflow last read it
// from the acquirer, still waits for the merchant's answer: an answer the
// acquirer refused then had its evidence refused, not its moment.
func (h *Handler) stillWaits(ctx context.Context, req disputeRequest) bool {
	d, err := h.Records.FindDispute(ctx, req.MerchantID, req.AccountID, req.DisputeID)
	return err == nil && d.Status == "needs_response" && d.EvidenceDue != nil && d.EvidenceDue.After(time.Now())
}

// answer answers disputes, signed for the caller who proved the key.
func (h *Handler) answer(c *gin.Context, m *api.Merchant, req disputeRequest, list []models.Dispute) {
	a := disputeAnswer{MerchantID: req.MerchantID, AccountID: req.AccountID, Disputes: make([]disputeView, 0, len(list)),
		ResultInfo: codes.OK.String()}
	values := []string{a.MerchantID, a.AccountID}
	for _, d := range list {
		a.Disputes = append(a.Disputes, viewOf(d))
		values = append(values, d.ID, d.Status)
	}
	a.EncryptionData = signing.SignUpper(m.Key(), append(values, a.ResultInfo)...)
	c.Set(api.ContextResultCode, codes.OK.ID)
	c.JSON(http.StatusOK, a)
}

// readEvidence checks the evidence of a request: its digest as signed, at
// most maxPieces pieces, each a named text or a file of an allowed type
// whose content is that type, within its size. Each piece's id is made of
// the dispute-free content, so the same evidence sent again is stored once.
func readEvidence(req disputeRequest) ([]*models.DisputeEvidence, *codes.Code) {
	fail := func(c codes.Code) ([]*models.DisputeEvidence, *codes.Code) { return nil, &c }
	if len(req.Evidence) == 0 {
		return fail(codes.MissingField.With(evidenceKey))
	}
	sum := sha256.Sum256(req.Evidence)
	if !strings.EqualFold(req.EvidenceSHA256, hex.EncodeToString(sum[:])) {
		return fail(codes.InvalidField.With("evidence_sha256 must be the hex SHA-256 of the evidence as sent"))
	}
	var pieces []piece
	if err := json.Unmarshal(req.Evidence, &pieces); err != nil {
		return fail(codes.InvalidField.With("evidence must be an array of {name, text} or {name, content_type, content_base64}"))
	}
	if len(pieces) == 0 || len(pieces) > maxPieces {
		return fail(codes.InvalidField.With(fmt.Sprintf("evidence holds 1 to %d pieces", maxPieces)))
	}
	out := make([]*models.DisputeEvidence, 0, len(pieces))
	fileKinds := map[string]bool{}
	for i, p := range pieces {
		field := evidenceKey + "[" + strconv.Itoa(i) + "]"
		name := strings.TrimSpace(p.Name)
		if name == "" || utf8.RuneCountInString(name) > maxName || !utf8.ValidString(name) {
			return fail(codes.InvalidField.With(field + ".name must be 1 to 64 characters"))
		}
		e := &models.DisputeEvidence{Name: name, CreatedAt: time.Now().UTC()}
		switch {
		case p.Text != "" && p.ContentBase64 == "":
			if !utf8.ValidString(p.Text) || utf8.RuneCountInString(p.Text) > maxText {
				return fail(codes.InvalidField.With(fmt.Sprintf("%s.text must be UTF-8 of at most %d characters", field, maxText)))
			}
			e.Kind, e.ContentType, e.Content = "text", "text/plain; charset=utf-8", []byte(p.Text)
		case p.Text == "" && p.ContentBase64 != "":
			content, err := base64.StdEncoding.DecodeString(p.ContentBase64)
			if err != nil || len(content) == 0 || len(content) > maxFile {
				return fail(codes.InvalidField.With(fmt.Sprintf("%s.content_base64 must be base64 of 1 byte to %d KiB", field, maxFile>>10)))
			}
			declared := strings.ToLower(strings.TrimSpace(p.ContentType))
			if declared == "text/plain" {
				declared = "text/plain; charset=utf-8"
			}
			if !slices.Contains(fileTypes, declared) || http.DetectContentType(content) != declared {
				return fail(codes.InvalidField.With(field + ".content_type must be application/pdf, image/png, image/jpeg or text/plain, and the content that type"))
			}
			// Acquirers take one file of each kind, so two in one answer
			// would leave one unsent; a text file goes as text and takes
			// no kind.
			if declared != "text/plain; charset=utf-8" {
				kind := dispute.FileKind(name)
				if fileKinds[kind] {
					return fail(codes.InvalidField.With(fmt.Sprintf("%s is a second file of kind %s; name each file after its kind (%s), one file of any other name",
						field, kind, strings.Join(dispute.FileKinds[:len(dispute.FileKinds)-1], ", "))))
				}
				fileKinds[kind] = true
			}
			e.Kind, e.ContentType, e.Content = "file", declared, content
		default:
			return fail(codes.InvalidField.With(field + " must hold a text or a file, not both"))
		}
		e.Size = len(e.Content)
		id := sha256.Sum256(append([]byte(req.DisputeID+"\x00"+name+"\x00"), e.Content...))
		e.ID = hex.EncodeToString(id[:20])
		out = append(out, e)
	}
	return out, nil
}
