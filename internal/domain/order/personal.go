package order

// Personal is the part of a payment order that is about the shopper as a
// person: who they are, how to reach them, where they live, and the
// identifiers of their device and accounts. It is sealed at rest and erased
// on request or after the retention period, while the rest of the order
// (amounts, currency, country, URLs, the cart) stays for the books.
//
// Note and Custom are free text a merchant may fill with anything, so they
// are treated as personal too.
type Personal struct {
	ShopperID    string `json:"shopper_id,omitempty"`
	ShopperEmail string `json:"shopper_email,omitempty"`
	ShopperIP    string `json:"shopper_ip,omitempty"`
	ShopperPhone string `json:"shopper_phone,omitempty"`

	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
	Document  string `json:"document,omitempty"`
	BirthDate string `json:"birth_date,omitempty"`
	Note      string `json:"note,omitempty"`
	Custom    string `json:"custom,omitempty"`

	BillingState      string `json:"billing_state,omitempty"`
	BillingCity       string `json:"billing_city,omitempty"`
	BillingAddress    string `json:"billing_address,omitempty"`
	BillingPostalCode Text   `json:"billing_postal_code,omitempty"`

	DeliveryFirstName    string `json:"delivery_firstname,omitempty"`
	DeliveryLastName     string `json:"delivery_lastname,omitempty"`
	DeliveryState        string `json:"delivery_state,omitempty"`
	DeliveryCity         string `json:"delivery_city,omitempty"`
	DeliveryAddress      string `json:"delivery_address,omitempty"`
	DeliveryPostalCode   Text   `json:"delivery_postal_code,omitempty"`
	DeliveryDistrictName string `json:"delivery_district_name,omitempty"`
	DeliveryStreetName   string `json:"delivery_street_name,omitempty"`

	UserAgent            string `json:"user_agent,omitempty"`
	CookieNew            string `json:"cookie_new,omitempty"`
	CookieOld            string `json:"cookie_old,omitempty"`
	SessionID            string `json:"session_id,omitempty"`
	DeviceFingerprint    string `json:"device_fingerprint,omitempty"`
	AntifraudTokenCookie string `json:"antifraud_token_cookie,omitempty"`

	AccountOwner []AccountOwner `json:"account_owner,omitempty"`
	Person       *Person        `json:"person,omitempty"`
}

// TakePersonal moves the personal fields out of d: d keeps everything else,
// and the result holds what was taken. PutPersonal puts them back.
func (d *Details) TakePersonal() Personal {
	p := Personal{}
	p.exchange(d)
	return p
}

// PutPersonal puts p's fields into d, which TakePersonal left without them.
func (d *Details) PutPersonal(p Personal) {
	p.exchange(d)
}

// exchange swaps every personal field between p and d. Swapping serves both
// directions: taking from a full d into an empty p, and putting from a full
// p into a d whose personal fields are empty.
func (p *Personal) exchange(d *Details) {
	p.ShopperID, d.ShopperID = d.ShopperID, p.ShopperID
	p.ShopperEmail, d.ShopperEmail = d.ShopperEmail, p.ShopperEmail
	p.ShopperIP, d.ShopperIP = d.ShopperIP, p.ShopperIP
	p.ShopperPhone, d.ShopperPhone = d.ShopperPhone, p.ShopperPhone
	p.FirstName, d.FirstName = d.FirstName, p.FirstName
	p.LastName, d.LastName = d.LastName, p.LastName
	p.Document, d.Document = d.Document, p.Document
	p.BirthDate, d.BirthDate = d.BirthDate, p.BirthDate
	p.Note, d.Note = d.Note, p.Note
	p.Custom, d.Custom = d.Custom, p.Custom
	p.BillingState, d.BillingState = d.BillingState, p.BillingState
	p.BillingCity, d.BillingCity = d.BillingCity, p.BillingCity
	p.BillingAddress, d.BillingAddress = d.BillingAddress, p.BillingAddress
	p.BillingPostalCode, d.BillingPostalCode = d.BillingPostalCode, p.BillingPostalCode
	p.DeliveryFirstName, d.DeliveryFirstName = d.DeliveryFirstName, p.DeliveryFirstName
	p.DeliveryLastName, d.DeliveryLastName = d.DeliveryLastName, p.DeliveryLastName
	p.DeliveryState, d.DeliveryState = d.DeliveryState, p.DeliveryState
	p.DeliveryCity, d.DeliveryCity = d.DeliveryCity, p.DeliveryCity
	p.DeliveryAddress, d.DeliveryAddress = d.DeliveryAddress, p.DeliveryAddress
	p.DeliveryPostalCode, d.DeliveryPostalCode = d.DeliveryPostalCode, p.DeliveryPostalCode
	p.DeliveryDistrictName, d.DeliveryDistrictName = d.DeliveryDistrictName, p.DeliveryDistrictName
	p.DeliveryStreetName, d.DeliveryStreetName = d.DeliveryStreetName, p.DeliveryStreetName
	p.UserAgent, d.UserAgent = d.UserAgent, p.UserAgent
	p.CookieNew, d.CookieNew = d.CookieNew, p.CookieNew
	p.CookieOld, d.CookieOld = d.CookieOld, p.CookieOld
	p.SessionID, d.SessionID = d.SessionID, p.SessionID
	p.DeviceFingerprint, d.DeviceFingerprint = d.DeviceFingerprint, p.DeviceFingerprint
	p.AntifraudTokenCookie, d.AntifraudTokenCookie = d.AntifraudTokenCookie, p.AntifraudTokenCookie
	p.AccountOwner, d.AccountOwner = d.AccountOwner, p.AccountOwner
	p.Person, d.Person = d.Person, p.Person
}
