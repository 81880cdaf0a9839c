package checkout

import "strings"

// Langs are the supported languages.
var Langs = []string{"en", "es"}

// messages holds every visible text of the pages, by language then key.
// English is complete; every other language must translate every key.
var messages = map[string]map[string]string{
	"en": {
		"pay_title":          "Secure payment",
		"order_summary":      "Order summary",
		"merchant":           "Merchant",
		"order_no":           "Order number",
		"total":              "Total",
		"item":               "Item",
		"item_code":          "Code",
		"quantity":           "Quantity",
		"price":              "Unit price",
		"card_details":       "Card details",
		"card_holder":        "Cardholder name",
		"card_number":        "Card number",
		"card_brand":         "Detected card brand",
		"accepted_cards":     "Accepted cards",
		"expiry":             "Expiry date",
		"expiry_month":       "Month",
		"expiry_year":        "Year",
		"month_placeholder":  "MM",
		"year_placeholder":   "YYYY",
		"security_code":      "Security code (CVV)",
		"security_hint":      "3 digits on the back, 4 on the front for American Express",
		"pay":                "Pay",
		"cancel":             "Cancel payment",
		"invalid_number":     "The card number is not valid.",
		"invalid_expiry":     "The expiry date is not valid.",
		"expired_card":       "The card has expired.",
		"invalid_cvv":        "The security code is not valid.",
		"test_card_live":     "This is a test card, which a live shop does not take.",
		"missing_holder":     "Please enter the cardholder name.",
		"declined":           "The payment was declined. Please try another card.",
		"session_expired":    "This payment session has expired. Please return to the shop and start again.",
		"payment_failed":     "The payment could not be completed.",
		"redirecting":        "Redirecting, please wait…",
		"continue":           "Continue",
		"processing":         "Processing…",
		"threeds_required":   "Your bank needs to confirm this payment.",
		"apm_title":          "Complete your payment",
		"error_title":        "Something went wrong",
		"secure_note":        "Your card details are sent over an encrypted connection and are never shared with the merchant.",
		"payment_methods":    "Ways to pay",
		"method_card":        "Card",
		"pay_with":           "Pay with",
		"document_number":    "Tax id (CPF), 11 digits",
		"bank":               "Your bank",
		"invalid_document":   "The tax id must be 11 digits.",
		"missing_bank":       "Please choose your bank.",
		"method_unavailable": "This payment method cannot be used for this order.",
	},
	"es": {
		"pay_title":          "Pago seguro",
		"order_summary":      "Resumen del pedido",
		"merchant":           "Comercio",
		"order_no":           "Número de pedido",
		"total":              "Total",
		"item":               "Artículo",
		"item_code":          "Código",
		"quantity":           "Cantidad",
		"price":              "Precio unitario",
		"card_details":       "Datos de la tarjeta",
		"card_holder":        "Nombre del titular",
		"card_number":        "Número de tarjeta",
		"card_brand":         "Marca de tarjeta detectada",
		"accepted_cards":     "Tarjetas aceptadas",
		"expiry":             "Fecha de caducidad",
		"expiry_month":       "Mes",
		"expiry_year":        "Año",
		"month_placeholder":  "MM",
		"year_placeholder":   "AAAA",
		"security_code":      "Código de seguridad (CVV)",
		"security_hint":      "3 cifras en el reverso, 4 en el anverso para American Express",
		"pay":                "Pagar",
		"cancel":             "Cancelar el pago",
		"invalid_number":     "El número de tarjeta no es válido.",
		"invalid_expiry":     "La fecha de caducidad no es válida.",
		"expired_card":       "La tarjeta está caducada.",
		"invalid_cvv":        "El código de seguridad no es válido.",
		"test_card_live":     "Es una tarjeta de prueba, que una tienda real no acepta.",
		"missing_holder":     "Introduzca el nombre del titular.",
		"declined":           "El pago ha sido rechazado. Pruebe con otra tarjeta.",
		"session_expired":    "Esta sesión de pago ha caducado. Vuelva a la tienda y empiece de nuevo.",
		"payment_failed":     "No se ha podido completar el pago.",
		"redirecting":        "Redirigiendo, espere por favor…",
		"continue":           "Continuar",
		"processing":         "Procesando…",
		"threeds_required":   "Su banco necesita confirmar este pago.",
		"apm_title":          "Complete su pago",
		"error_title":        "Se ha producido un error",
		"secure_note":        "Los datos de su tarjeta se envían por una conexión cifrada y nunca se comparten con el comercio.",
		"payment_methods":    "Formas de pago",
		"method_card":        "Tarjeta",
		"pay_with":           "Pagar con",
		"document_number":    "Número de CPF, 11 dígitos",
		"bank":               "Su banco",
		"invalid_document":   "El CPF debe tener 11 dígitos.",
		"missing_bank":       "Elija su banco.",
		"method_unavailable": "Esta forma de pago no está disponible para este pedido.",
	},
}

// normLang maps a language tag to a supported language: "es", "ES" and
// "es-MX" give "es"; anything unsupported gives "en".
func normLang(lang string) string {
	l := strings.ToLower(strings.TrimSpace(lang))
	if i := strings.IndexAny(l, "-_"); i >= 0 {
		l = l[:i]
	}
	if _, ok := messages[l]; ok {
		return l
	}
	return "en"
}

// Message translates a message key for a language. An unsupported language
// falls back to English (a regional tag such as "es-MX" uses its base
// language); an unknown key returns the key itself.
func Message(lang, key string) string {
	if m, ok := messages[normLang(lang)][key]; ok {
		return m
	}
	if m, ok := messages["en"][key]; ok {
		return m
	}
	return key
}
