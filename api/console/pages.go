package console

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// pageData is what every page template gets; each page fills its part.
type pageData struct {
	Title   string
	Lang    string
	User    *models.ConsoleUser
	CSRF    string
	Error   string
	Notice  string // a done action's outcome
	Message string
	Back    string
	Email   string
	Query   url.Values // the list's filters, to keep in links
	Window  url.Values // the reconciliation's days, for its statement's link
	// OtherLang is this page's address in the other language, with its
	// other parameters (a filter, the home's mode) kept.
	OtherLang string

	Orders       []models.Order
	Order        *models.Order
	Timeline     []event
	Refunds      []models.Refund
	Next         string // the next page's link; empty on the last page
	Payouts      []models.Payout
	Plan         []planRow
	PlanIDs      string
	Reruns       []models.PayoutRerun
	Rerun        *rerunView
	Accounts     []balanceRow
	Entries      []entryRow
	Stuck        []stuckRow
	Backlog      []models.Notification
	Breakers     []models.ConnectorHealth
	NewKey       string
	WorkflowLink string
	ReconRuns    []models.ReconRun
	ReconTotals  []models.ReconClassTotal
	ReconItems   []models.ReconItem
	Statuses     []string
	Statement    []models.StatementLine
	Disputes     []disputeRow
	Rates        []rateRow
	Charts       []chartView
	Facts        []string
	Modes        []modeLink
	Mode         string // the accounts' mode a page's figures are of
}

// render writes a page in the request's language.
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, name string, d pageData) {
	d.Lang = langOf(r)
	d.OtherLang = otherLangURL(r, d.Lang)
	if sess := sessionOf(r.Context()); sess != nil {
		d.User = &sess.User
		d.CSRF = sess.CSRF
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := pages.ExecuteTemplate(w, name+".html", d); err != nil {
		s.Logger.Error("console: render", "page", name, "error", err)
	}
}

// otherLangURL is the request's path and parameters with lang switched to
// the language the page is not in. A page answering a form's post links to
// the page the form was on (pageOfPost), as the post's address takes no GET.
func otherLangURL(r *http.Request, lang string) string {
	q := r.URL.Query()
	path := r.URL.Path
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		q = url.Values{}
		path = pageOfPost(path)
	}
	if lang == "es" {
		q.Set("lang", "en")
	} else {
		q.Set("lang", "es")
	}
	if path != "/console" && !strings.HasPrefix(path, "/console/") {
		// Only the console's own pages render; a path of another shape (//host)
		// must not become a link off the site.
		path = "/console/"
	}
	return (&url.URL{Path: path, RawQuery: q.Encode()}).String()
}

// pageOfPost is the page a form posting to path is on, the console's home
// when the form is not one of its pages'.
func pageOfPost(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case path == "/console/login" || path == "/console/orders":
		return path
	case len(parts) == 4 && parts[1] == "orders":
		return "/console/orders/" + parts[2] // a refund, capture, cancel or review
	case strings.HasPrefix(path, "/console/keys/"):
		return "/console/keys"
	case strings.HasPrefix(path, "/console/payouts/"):
		return "/console/payouts"
	case strings.HasPrefix(path, "/console/recon/exceptions/"):
		return "/console/recon/exceptions"
	case path == "/console/notifications/resend":
		return "/console/stuck"
	}
	return "/console/"
}

// langOf is the page's language: ?lang=, else the browser's preference,
// else English.
func langOf(r *http.Request) string {
	switch r.URL.Query().Get("lang") {
	case "es":
		return "es"
	case "en":
		return "en"
	}
	if strings.HasPrefix(strings.ToLower(r.Header.Get("Accept-Language")), "es") {
		return "es"
	}
	return "en"
}

var funcs = template.FuncMap{
	"formid": func() string { return randomToken()[:32] },
	"statuses": func() []status.Payment {
		return []status.Payment{status.Pending, status.Authorised, status.HeldForReview, status.Paid, status.Refunded,
			status.PartiallyRefunded, status.Cancelled, status.Failed, status.Expired}
	},
	"payoutStatuses": func() []string { return []string{"NEW", "SCHEDULED", "SUBMITTED", "COMPLETED", "FAILED"} },
	"t":              t,
	"money": func(minor int64, currency string) string {
		return money.FromMinor(minor, currency).ExtendedString() + " " + currency
	},
	"status": func(lang string, p status.Payment) string {
		return t(lang, "status_"+strings.ReplaceAll(p.Name(), " ", "_"))
	},
	"when": func(at time.Time) string { return at.UTC().Format("2006-01-02 15:04:05 UTC") },
	"day":  func(at time.Time) string { return at.UTC().Format(time.DateOnly) },
	"whenp": func(at *time.Time) string {
		if at == nil {
			return ""
		}
		return at.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"withLang": func(lang, path string) string {
		if strings.Contains(path, "?") {
			return path + "&lang=" + lang
		}
		return path + "?lang=" + lang
	},
	"refundable": func(o *models.Order) bool {
		return o.PaymentStatus == status.Paid || o.PaymentStatus == status.PartiallyRefunded
	},
	"authorised": func(o *models.Order) bool { return o.PaymentStatus == status.Authorised },
	"held":       func(o *models.Order) bool { return o.PaymentStatus == status.HeldForReview },
	"decimal":    func(minor int64, currency string) string { return money.FromMinor(minor, currency).ExtendedString() },
	"bp":         func(bp int64) string { return fmt.Sprintf("%d.%02d%%", bp/100, bp%100) },
}

// t is a label in lang; English when Spanish lacks it, the key when both do.
func t(lang, key string) string {
	if lang == "es" {
		if v, ok := es[key]; ok {
			return v
		}
	}
	if v, ok := en[key]; ok {
		return v
	}
	return key
}

var en = map[string]string{
	"recon": "Reconciliation", "exceptions": "Exceptions", "statement": "Settlement statement", "recon_runs": "Runs",
	"recon_classes": "Per class", "day": "Day", "lines": "Lines", "owed": "Owed", "posted": "Posted", "unposted": "Not posted yet",
	"ran_at": "Ran at", "report_refused": "Report refused", "source": "Source", "class": "Class", "count": "Count", "gross": "Gross", "fee": "Fee", "net": "Net",
	"detail": "Detail", "note": "Note", "act": "Act", "action": "Action",
	"act_resolve": "Resolve", "act_write_off": "Write off", "act_claim": "Claim from the acquirer",
	"source_line": "acquirer's line", "source_owed": "owed by our record",
	"class_matched": "matched", "class_pending": "pending", "class_missing_at_acquirer": "missing at the acquirer",
	"class_missing_here": "missing here", "class_amount_mismatch": "amount mismatch", "class_currency_mismatch": "currency mismatch",
	"class_duplicate": "duplicate", "class_refund_mismatch": "refund mismatch", "class_fee_outside_schedule": "fee outside the contract",
	"class_refund_reversed": "refund given back by the acquirer", "recon_all": "all",
	"recon_none": "nothing to do", "recon_open": "open", "recon_claimed": "claimed", "recon_resolved": "resolved",
	"recon_written_off": "written off", "exception": "Exception",
	"no_such_exception": "No such exception", "unknown_action": "Unknown action", "note_required": "A note is required (1,000 characters at most)",
	"not_allowed": "Not done", "console": "Paygate console", "sign_in": "Sign in", "sign_out": "Sign out", "email": "Email", "password": "Password",
	"bad_login": "The email or the password is wrong.", "too_many": "Too many sign-in attempts. Wait a minute and try again.", "stale_form": "The sign-in form has expired. Sign in again.",
	"forbidden": "Not allowed", "forbidden_text": "Your role cannot open this page.",
	"not_found": "Not found", "not_found_text": "There is no such order in your accounts.",
	"error": "Something went wrong", "error_text": "The console could not do that just now. Try again in a moment.",
	"already_done": "Already sent", "orders": "Orders", "refunds": "Refunds", "keys": "Sign keys", "payouts": "Payouts",
	"reruns": "Re-runs", "balances": "Balances", "stuck": "Stuck", "order_no": "Order number", "transaction_id": "Transaction id",
	"status": "Status", "from": "From", "to": "To", "card_last4": "Card last 4", "search": "Search", "amount": "Amount",
	"created": "Created", "account": "Account", "next_page": "Next page", "export_csv": "Export CSV", "card": "Card",
	"refund": "Refund", "approve": "Approve", "reject": "Reject", "refund_amount": "Refund amount", "capture": "Capture", "cancel": "Cancel", "timeline": "Timeline",
	"temporal_link": "Open its workflow in the Temporal UI", "no_rows": "Nothing to show.", "refunded": "Refunded",
	"captured": "Captured", "reason": "Reason", "rotate": "Rotate the sign key", "connector": "Connector", "routing": "routing", "breakers": "Connector breakers", "worker": "Worker",
	"breakers_text": "Each worker's circuit breaker per connector, as it last changed in the last day, and any not closed in a worker still running however long ago it changed: open, routed payments skip the connector; half_open, one payment probes it.", "new_key": "New sign key (shown once)",
	"key_text":     "The old key stays valid for 24 hours, so your systems can move to the new one.",
	"failure_type": "Failure type", "merchant": "Merchant", "select": "Select", "preview": "Preview the re-run",
	"run_rerun": "Re-run these payouts", "will": "What will happen", "rerun_of": "Re-run", "by": "By", "when": "When",
	"outcome": "Outcome", "dry_run": "Dry run", "pending": "Pending settlement", "available": "Available", "reserved": "Reserved", "merchant_owes": "Owed by the merchant", "currency": "Currency",
	"entries": "Ledger entries", "kind": "Kind", "reference": "Reference", "what": "What", "since": "Since",
	"resend": "Resend", "backlog": "Notification backlog", "notify_id": "Notify id", "attempts": "Attempts",
	"stuck_text": "Orders and payouts not final after their expected time.", "language": "Español",
	"status_pending": "pending", "status_authorised": "authorised", "status_held_for_review": "held for review",
	"status_paid": "paid", "status_refunded": "refunded", "status_partially_refunded": "partially refunded",
	"status_cancelled": "cancelled", "status_failed": "failed", "status_expired": "expired", "back": "Back",
	"ev_created": "Order created", "ev_final": "Latest status", "ev_status": "Status", "ev_refund": "Refund", "ev_notify": "Notification attempt", "ev_charge": "Charge at",
	"rerun_started": "The re-run is under way.", "progress": "Progress", "total": "Total", "started": "Started", "skipped": "Skipped",
	"disputes": "Disputes", "dispute": "Dispute", "stage": "Stage", "deadline": "Evidence due by", "due_soon": "due within 48 hours",
	"disputes_text": "Cardholders' disputes, those waiting for the merchant's evidence first, nearest deadline first.",
	"dispute_rates": "Dispute rate per merchant, last 30 days", "payments_30d": "Payments", "rate": "Rate",
	"rate_warning": "above the warning threshold",
	"home":         "Home", "figures": "Figures", "no_data": "Nothing in this window.", "approved": "approved", "declined": "declined", "errors": "errors",
	"ch_volume": "Approved volume per day (%s)", "ch_volume_desc": "The amount of the payments approved on each of the last 14 days.",
	"ch_approval": "Approval rate per day", "ch_approval_desc": "Of each day's payments the acquirer approved or declined, the share approved.",
	"ch_declines": "Declines by reason", "ch_declines_desc": "The declined payments of the last 14 days by result code.",
	"ch_methods": "Payment methods", "ch_methods_desc": "The payments of the last 14 days by method: card brand or alternative method.",
	"ch_refunds": "Refunds per day (%s)", "ch_refunds_desc": "The amount refunded on each of the last 14 days.",
	"fact_approved": "Approved in the last %d days: %s.", "fact_rate": "Approval rate over the last %d days: %s.",
	"ch_balances": "Balances in %s", "ch_balances_desc": "What the merchants' accounts hold: available to pay out, reserved for payouts under way, pending settlement by the acquirers.",
	"ch_payouts": "Payouts by status", "ch_payouts_desc": "The payouts of the last 14 days by status, with their amounts.",
	"ch_settled": "Settled per day (net, %s)", "ch_settled_desc": "The net of the acquirers' settlement lines of each of the last 14 days.",
	"ch_stuck": "Stuck work", "ch_stuck_desc": "Orders and payouts past their expected time, and notifications waiting for delivery.",
	"ch_backlog": "Notifications waiting, by age", "ch_backlog_desc": "Notifications not yet delivered, by how long they have waited.",
	"ch_connectors": "Connectors, last 24 hours", "ch_connectors_desc": "Each connector's payments of the last day: approved, declined by the issuer, failed at the connector; an open breaker is named beside it.",
	"stuck_orders": "Orders pending too long", "stuck_payouts": "Payouts not final", "waiting_notifications": "Notifications waiting",
	"nothing_stuck": "Nothing is stuck.", "no_backlog": "No notification is waiting.",
	"age_1h": "under 1 h", "age_6h": "1 to 6 h", "age_24h": "6 to 24 h", "age_older": "over a day",
	"search_box": "Order number, transaction id or shopper email", "search_none": "No order matches %q.",
	"shopper_kept": "the email searched for (kept out of the address)", "clear_filters": "Clear the filters",
	"mode_live": "Live accounts", "mode_test": "Test accounts", "modes": "Whose figures",
	"fact_mode_live": "The figures of live accounts: test accounts' payments and balances are not in them.",
	"fact_mode_test": "The figures of test accounts: play money, never settled or paid out.",
}

var es = map[string]string{
	"recon": "Conciliación", "exceptions": "Excepciones", "statement": "Liquidación", "recon_runs": "Ejecuciones",
	"recon_classes": "Por clase", "day": "Día", "lines": "Líneas", "owed": "Debido", "posted": "Contabilizado", "unposted": "Sin contabilizar",
	"ran_at": "Ejecutado", "report_refused": "Informe rechazado", "source": "Origen", "class": "Clase", "count": "Cantidad", "gross": "Bruto", "fee": "Comisión", "net": "Neto",
	"detail": "Detalle", "note": "Nota", "act": "Aplicar", "action": "Acción",
	"act_resolve": "Resolver", "act_write_off": "Dar de baja", "act_claim": "Reclamar al adquirente",
	"source_line": "línea del adquirente", "source_owed": "debido según nuestro registro",
	"class_matched": "conciliado", "class_pending": "pendiente", "class_missing_at_acquirer": "falta en el adquirente",
	"class_missing_here": "falta aquí", "class_amount_mismatch": "importe distinto", "class_currency_mismatch": "moneda distinta",
	"class_duplicate": "duplicado", "class_refund_mismatch": "reembolso distinto", "class_fee_outside_schedule": "comisión fuera de contrato",
	"class_refund_reversed": "reembolso devuelto por el adquirente", "recon_all": "todas",
	"recon_none": "nada que hacer", "recon_open": "abierta", "recon_claimed": "reclamada", "recon_resolved": "resuelta",
	"recon_written_off": "dada de baja", "exception": "Excepción",
	"no_such_exception": "No existe esa excepción", "unknown_action": "Acción desconocida", "note_required": "Hace falta una nota (1.000 caracteres como máximo)",
	"not_allowed": "No se hizo", "console": "Consola de Paygate", "sign_in": "Iniciar sesión", "sign_out": "Cerrar sesión", "email": "Correo electrónico",
	"password": "Contraseña", "bad_login": "El correo o la contraseña no son correctos.",
	"too_many":   "Demasiados intentos de acceso. Espere un minuto y vuelva a intentarlo.",
	"stale_form": "El formulario de acceso ha caducado. Vuelva a iniciar sesión.",
	"forbidden":  "No permitido", "forbidden_text": "Su rol no puede abrir esta página.",
	"not_found": "No encontrado", "not_found_text": "No hay tal pedido en sus cuentas.",
	"error": "Algo salió mal", "error_text": "La consola no pudo hacerlo ahora. Vuelva a intentarlo en un momento.",
	"already_done": "Ya enviado", "orders": "Pedidos", "refunds": "Reembolsos", "keys": "Claves de firma", "payouts": "Pagos",
	"reruns": "Reintentos", "balances": "Saldos", "stuck": "Atascados", "order_no": "Número de pedido",
	"transaction_id": "Id de transacción", "status": "Estado", "from": "Desde", "to": "Hasta", "card_last4": "Últimos 4 de la tarjeta",
	"search": "Buscar", "amount": "Importe", "created": "Creado", "account": "Cuenta", "next_page": "Página siguiente",
	"export_csv": "Exportar CSV", "card": "Tarjeta", "refund": "Reembolsar", "approve": "Aprobar", "reject": "Rechazar", "refund_amount": "Importe a reembolsar",
	"capture": "Capturar", "cancel": "Anular", "timeline": "Historial", "temporal_link": "Abrir su workflow en Temporal",
	"no_rows": "Nada que mostrar.", "refunded": "Reembolsado", "captured": "Capturado", "reason": "Motivo",
	"rotate": "Renovar la clave de firma", "connector": "Conector", "routing": "enrutamiento", "breakers": "Cortacircuitos de conectores", "worker": "Worker",
	"breakers_text": "El cortacircuitos de cada worker por conector, según cambió por última vez en el último día, y los que no están cerrados en un worker aún en marcha, cambiaran cuando cambiaran: open, los pagos enrutados saltan el conector; half_open, un pago lo prueba.", "new_key": "Nueva clave de firma (se muestra una vez)",
	"key_text":     "La clave anterior sigue siendo válida 24 horas, para que sus sistemas pasen a la nueva.",
	"failure_type": "Tipo de fallo", "merchant": "Comercio", "select": "Elegir", "preview": "Ver el reintento",
	"run_rerun": "Reintentar estos pagos", "will": "Qué ocurrirá", "rerun_of": "Reintento", "by": "Por", "when": "Cuándo",
	"outcome": "Resultado", "dry_run": "Simulación", "pending": "Pendiente de liquidación", "available": "Disponible", "reserved": "Reservado", "merchant_owes": "Adeudado por el comercio", "currency": "Moneda",
	"entries": "Asientos", "kind": "Tipo", "reference": "Referencia", "what": "Qué", "since": "Desde",
	"resend": "Reenviar", "backlog": "Notificaciones pendientes", "notify_id": "Id de notificación", "attempts": "Intentos",
	"stuck_text": "Pedidos y pagos sin estado final pasado su tiempo esperado.", "language": "English",
	"status_pending": "pendiente", "status_authorised": "autorizado", "status_held_for_review": "en revisión",
	"status_paid": "pagado", "status_refunded": "reembolsado", "status_partially_refunded": "reembolsado en parte",
	"status_cancelled": "anulado", "status_failed": "fallido", "status_expired": "caducado", "back": "Volver",
	"ev_created": "Pedido creado", "ev_final": "Último estado", "ev_status": "Estado", "ev_refund": "Reembolso",
	"ev_notify": "Intento de notificación", "ev_charge": "Cargo en", "rerun_started": "El reintento está en marcha.", "progress": "Progreso",
	"total": "Total", "started": "Iniciados", "skipped": "Omitidos",
	"disputes": "Disputas", "dispute": "Disputa", "stage": "Etapa", "deadline": "Pruebas hasta", "due_soon": "vence en menos de 48 horas",
	"disputes_text": "Disputas de titulares, primero las que esperan pruebas del comercio, la fecha límite más próxima primero.",
	"dispute_rates": "Tasa de disputas por comercio, últimos 30 días", "payments_30d": "Pagos", "rate": "Tasa",
	"rate_warning": "por encima del umbral de aviso",
	"home":         "Inicio", "figures": "Cifras", "no_data": "Nada en este periodo.", "approved": "aprobados", "declined": "denegados", "errors": "errores",
	"ch_volume": "Volumen aprobado por día (%s)", "ch_volume_desc": "El importe de los pagos aprobados en cada uno de los últimos 14 días.",
	"ch_approval": "Tasa de aprobación por día", "ch_approval_desc": "De los pagos de cada día que el adquirente aprobó o denegó, la parte aprobada.",
	"ch_declines": "Denegaciones por motivo", "ch_declines_desc": "Los pagos denegados de los últimos 14 días por código de resultado.",
	"ch_methods": "Métodos de pago", "ch_methods_desc": "Los pagos de los últimos 14 días por método: marca de tarjeta o método alternativo.",
	"ch_refunds": "Reembolsos por día (%s)", "ch_refunds_desc": "El importe reembolsado en cada uno de los últimos 14 días.",
	"fact_approved": "Aprobado en los últimos %d días: %s.", "fact_rate": "Tasa de aprobación de los últimos %d días: %s.",
	"ch_balances": "Saldos en %s", "ch_balances_desc": "Lo que tienen las cuentas de los comercios: disponible para pagar, reservado para pagos en curso, pendiente de liquidación.",
	"ch_payouts": "Pagos por estado", "ch_payouts_desc": "Los pagos de los últimos 14 días por estado, con sus importes.",
	"ch_settled": "Liquidado por día (neto, %s)", "ch_settled_desc": "El neto de las líneas de liquidación de los adquirentes de cada uno de los últimos 14 días.",
	"ch_stuck": "Trabajo atascado", "ch_stuck_desc": "Pedidos y pagos fuera de plazo, y notificaciones pendientes de entrega.",
	"ch_backlog": "Notificaciones pendientes, por antigüedad", "ch_backlog_desc": "Notificaciones aún no entregadas, por el tiempo que llevan esperando.",
	"ch_connectors": "Conectores, últimas 24 horas", "ch_connectors_desc": "Los pagos del último día de cada conector: aprobados, denegados por el emisor, fallidos en el conector; un cortocircuito abierto se nombra al lado.",
	"stuck_orders": "Pedidos pendientes demasiado tiempo", "stuck_payouts": "Pagos sin estado final", "waiting_notifications": "Notificaciones pendientes",
	"nothing_stuck": "No hay nada atascado.", "no_backlog": "No hay notificaciones pendientes.",
	"age_1h": "menos de 1 h", "age_6h": "de 1 a 6 h", "age_24h": "de 6 a 24 h", "age_older": "más de un día",
	"search_box": "Número de pedido, id de transacción o correo del comprador", "search_none": "Ningún pedido coincide con %q.",
	"shopper_kept": "el correo buscado (fuera de la dirección)", "clear_filters": "Quitar los filtros",
	"mode_live": "Cuentas reales", "mode_test": "Cuentas de prueba", "modes": "De quién son las cifras",
	"fact_mode_live": "Las cifras de las cuentas reales: los pagos y saldos de las cuentas de prueba no están en ellas.",
	"fact_mode_test": "Las cifras de las cuentas de prueba: dinero ficticio, nunca liquidado ni pagado.",
}
