package payments

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/workflows"
)

// cardOptions are what a direct card payment asks of the connector beyond
// the card: the merchant's own 3-D Secure result and installments.
type cardOptions struct {
	threeDS      *workflows.ThreeDSData
	installments int
}

// readCardOptions reads additional_information[].mpi_info (eci, cavv, xid,
// dsTransID: interface, Payment order) and installments, and refuses what
// the connectors the order may go to cannot take.
func (h *Handler) readCardOptions(d *order.Details, account *merchant.Account) (cardOptions, *codes.Code) {
	fail := func(c codes.Code) (cardOptions, *codes.Code) { return cardOptions{}, &c }
	var out cardOptions
	for _, ai := range d.AdditionalInformation {
		m := ai.MPIInfo
		if m == nil || (m.ECI == "" && m.CAVV == "" && m.XID == "" && m.DSTransID == "") {
			continue
		}
		switch {
		case len(m.ECI) != 2 || strings.Trim(m.ECI, "0123456789") != "":
			return fail(codes.InvalidField.With("additional_information.mpi_info.eci must be two digits"))
		case m.CAVV == "" || len(m.CAVV) > 64 || len(m.XID) > 64 || len(m.DSTransID) > 64:
			return fail(codes.InvalidField.With("additional_information.mpi_info needs a cavv, and cavv, xid and dsTransID of 64 characters at most"))
		case out.threeDS != nil:
			return fail(codes.InvalidField.With("additional_information holds one mpi_info at most"))
		}
		out.threeDS = &workflows.ThreeDSData{External: true, ECI: m.ECI, CAVV: m.CAVV, XID: m.XID, DSTransID: m.DSTransID}
	}
	if s := strings.TrimSpace(d.Installments.String()); s != "" && s != "0" && s != "1" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 || n > 60 {
			return fail(codes.InvalidField.With("installments must be a number of monthly payments from 2 to 60"))
		}
		out.installments = n
	}
	if out.threeDS == nil && out.installments == 0 {
		return out, nil
	}
	// Every connector the order may be charged at must take what it
	// carries: a failover must not drop the merchant's authentication or
	// turn installments into one payment. A gateway that knows no offers
	// (an API built without connectors) leaves the refusal to the
	// connector itself, which refuses what it cannot take.
	if h.Gate.Offers == nil {
		return out, nil
	}
	names := []string{cmp.Or(account.Connector, connector.DefaultName)}
	for _, n := range account.Routing.Connectors() {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, name := range names {
		var offer connector.Offer
		if c, err := h.Gate.Offers.Get(name); err == nil {
			offer = c.Offer()
		}
		if out.threeDS != nil && !offer.ExternalThreeDS {
			return fail(codes.ConnectorCannot.With(fmt.Sprintf("%s does not take a 3-D Secure result of the merchant's own (mpi_info)", name)))
		}
		if out.installments > 0 && !offer.Installments {
			return fail(codes.ConnectorCannot.With(fmt.Sprintf("%s does not take installments", name)))
		}
	}
	return out, nil
}
