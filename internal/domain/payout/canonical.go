package payout

import "strings"

// canonical returns a deep copy of r with every string trimmed of
// surrounding whitespace. It never shares a pointer or slice with r, so
// Validate can fill in defaults without touching the caller's request.
func (r Request) canonical() Request {
	c := r
	for _, s := range []*string{
		&c.MerchantID, &c.AccountID, &c.RequestID, &c.PaymentCurrency, &c.SourceCurrency, &c.PaymentDate,
		&c.PaymentMethod, &c.FeePaidBy, &c.SwiftChargeOption, &c.FundSource, &c.BeneficiaryID,
		&c.Reason, &c.Reference, &c.ClientData, &c.NotifyURL, &c.EncryptionData,
	} {
		*s = strings.TrimSpace(*s)
	}
	trimText(&c.PaymentAmount, &c.SourceAmount)
	if r.Beneficiary != nil {
		b := r.Beneficiary.canonical()
		c.Beneficiary = &b
	}
	if r.Payer != nil {
		p := r.Payer.canonical()
		c.Payer = &p
	}
	return c
}

func (b Beneficiary) canonical() Beneficiary {
	c := b
	trim(&c.EntityType, &c.CompanyName, &c.FirstName, &c.LastName, &c.DateOfBirth)

	a := &c.Address
	trim(&a.Street, &a.StreetAddress, &a.Complement, &a.City, &a.State, &a.CountryCode)
	trimText(&a.Number, &a.Postcode)

	i := &c.AdditionalInfo
	trim(&i.BusinessArea, &i.PersonalEmail, &i.PersonalIDType, &i.PersonalFiscalCountry)
	trimText(&i.BusinessPhoneNumber, &i.BusinessRegistrationNumber, &i.PersonalIDNumber, &i.PersonalMobileNumber,
		&i.PersonalNetMonthlyAverageIncome, &i.PersonalPhoneCountryCode, &i.PersonalPhoneAreaCode)

	if b.PersonDocuments != nil {
		c.PersonDocuments = make([]PersonDocument, len(b.PersonDocuments))
		for n, d := range b.PersonDocuments {
			trim(&d.FileType, &d.FileURL)
			if d.Labels != nil {
				labels := make([]string, len(d.Labels))
				for j, l := range d.Labels {
					labels[j] = strings.TrimSpace(l)
				}
				d.Labels = labels
			}
			c.PersonDocuments[n] = d
		}
	}

	k := &c.BankDetails
	trim(&k.AccountCurrency, &k.AccountName, &k.BankAccountCategory, &k.BankCountryCode, &k.BankName,
		&k.BankStreetAddress, &k.IBAN, &k.SwiftCode, &k.TransactionReference, &k.LocalClearingSystem)
	trimText(&k.OwnerDocumentNumber, &k.AccountNumber, &k.BankBranch, &k.BankCode, &k.BindingMobileNumber)
	return c
}

func (p Payer) canonical() Payer {
	c := p
	trim(&c.EntityType, &c.CompanyName, &c.FirstName, &c.LastName, &c.DateOfBirth)
	a := &c.Address
	trim(&a.StreetAddress, &a.City, &a.State, &a.CountryCode)
	trimText(&a.Postcode)
	i := &c.AdditionalInfo
	trim(&i.BusinessRegistrationType, &i.PersonalEmail, &i.Job)
	trimText(&i.BusinessRegistrationNumber, &i.ExternalID, &i.PersonalIDNumber)
	return c
}

func trim(fields ...*string) {
	for _, f := range fields {
		*f = strings.TrimSpace(*f)
	}
}

func trimText(fields ...*Text) {
	for _, f := range fields {
		*f = Text(strings.TrimSpace(string(*f)))
	}
}
