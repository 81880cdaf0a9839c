(function () {
  'use strict';

  // Card rules, mirroring internal/card: Luhn, brand by IIN range, expiry
  // (valid through the last instant of the month, in UTC; at most 20 years
  // ahead), CVV of 4 digits for amex and 3 for any other brand.
  var ranges = [
    ['34', '34', 'amex'], ['37', '37', 'amex'],
    ['4', '4', 'visa'],
    ['2221', '2720', 'mastercard'], ['51', '55', 'mastercard'],
    ['6011', '6011', 'discover'], ['644', '649', 'discover'], ['65', '65', 'discover'],
    ['3528', '3589', 'jcb'],
    ['62', '62', 'unionpay'], ['81', '81', 'unionpay'],
    ['300', '305', 'diners'], ['3095', '3095', 'diners'], ['36', '36', 'diners'], ['38', '39', 'diners'],
    ['50', '50', 'maestro'], ['56', '58', 'maestro'], ['6304', '6304', 'maestro'], ['639', '639', 'maestro'],
    ['67', '67', 'maestro']
  ];
  var labels = {
    visa: 'Visa', mastercard: 'Mastercard', amex: 'Amex', discover: 'Discover',
    jcb: 'JCB', unionpay: 'UnionPay', diners: 'Diners Club', maestro: 'Maestro'
  };
  var maxYearsAhead = 20;

  function isDigits(s) { return /^[0-9]+$/.test(s); }

  // normalize drops the spaces and hyphens a shopper may type.
  function normalize(s) { return String(s).replace(/[\s-]/g, ''); }

  function luhn(pan) {
    if (!isDigits(pan)) { return false; }
    var sum = 0, dbl = false;
    for (var i = pan.length - 1; i >= 0; i--) {
      var d = pan.charCodeAt(i) - 48;
      if (dbl) { d *= 2; if (d > 9) { d -= 9; } }
      sum += d;
      dbl = !dbl;
    }
    return sum % 10 === 0;
  }

  function validNumber(pan) {
    // As card.ValidateNumber: no card number starts with a zero.
    return pan.length >= 12 && pan.length <= 19 && pan[0] !== "0" && luhn(pan);
  }

  function brand(pan) {
    if (!isDigits(pan)) { return 'unknown'; }
    for (var i = 0; i < ranges.length; i++) {
      var lo = ranges[i][0], hi = ranges[i][1];
      if (pan.length < lo.length) { continue; }
      var p = pan.slice(0, lo.length);
      if (p >= lo && p <= hi) { return ranges[i][2]; }
    }
    return 'unknown';
  }

  // checkExpiry returns '' when valid, else the message key.
  function checkExpiry(month, year, now) {
    if (!/^[0-9]{1,2}$/.test(month) || !/^([0-9]{2}|[0-9]{4})$/.test(year)) { return 'invalid_expiry'; }
    var m = parseInt(month, 10), y = parseInt(year, 10);
    if (m < 1 || m > 12) { return 'invalid_expiry'; }
    if (year.length === 2) { y += 2000; }
    var ny = now.getUTCFullYear(), nm = now.getUTCMonth() + 1;
    if (y > ny + maxYearsAhead) { return 'invalid_expiry'; }
    if (y < ny || (y === ny && m < nm)) { return 'expired_card'; }
    return '';
  }

  function validCVV(cvv, b) {
    return isDigits(cvv) && cvv.length === (b === 'amex' ? 4 : 3);
  }

  // validate returns the message keys of every problem, keyed by field.
  function validate(v, now) {
    var errs = {};
    var pan = normalize(v.number);
    if (String(v.holder).trim() === '') { errs.holder = 'missing_holder'; }
    if (!validNumber(pan)) { errs.number = 'invalid_number'; }
    var e = checkExpiry(v.month, v.year, now);
    if (e) { errs.expiry = e; }
    if (!validCVV(v.cvv, brand(pan))) { errs.cvv = 'invalid_cvv'; }
    return errs;
  }

  var api = {
    luhn: luhn, brand: brand, validNumber: validNumber, checkExpiry: checkExpiry,
    validCVV: validCVV, validate: validate, normalize: normalize, labels: labels
  };
  if (typeof document === 'undefined') {
    if (typeof module === 'object' && module.exports) { module.exports = api; }
    return;
  }

  var form = document.getElementById('pay-form');
  if (!form) { return; }
  var el = {
    holder: document.getElementById('card-holder'),
    number: document.getElementById('card-number'),
    month: document.getElementById('expiry-month'),
    year: document.getElementById('expiry-year'),
    cvv: document.getElementById('security-code'),
    brand: document.getElementById('card-brand'),
    error: document.getElementById('form-error'),
    button: document.getElementById('pay-button')
  };
  var inputs = { holder: [el.holder], number: [el.number], expiry: [el.month, el.year], cvv: [el.cvv] };
  var order = ['holder', 'number', 'expiry', 'cvv'];
  var touched = {};

  // The script shows its own translated messages instead of the browser's.
  form.noValidate = true;

  function text(key) {
    var attr = 'data-msg-' + key.replace(/_/g, '-');
    return form.getAttribute(attr) || key;
  }

  function values() {
    return { holder: el.holder.value, number: el.number.value, month: el.month.value, year: el.year.value, cvv: el.cvv.value };
  }

  function show(errs, all) {
    while (el.error.firstChild) { el.error.removeChild(el.error.firstChild); }
    var first = null;
    for (var i = 0; i < order.length; i++) {
      var f = order[i], bad = !!errs[f] && (all || touched[f]);
      for (var j = 0; j < inputs[f].length; j++) {
        if (bad) { inputs[f][j].setAttribute('aria-invalid', 'true'); } else { inputs[f][j].removeAttribute('aria-invalid'); }
      }
      if (bad) {
        var p = document.createElement('p');
        p.textContent = text(errs[f]);
        el.error.appendChild(p);
        if (!first) { first = inputs[f][0]; }
      }
    }
    el.error.hidden = !first;
    return first;
  }

  function updateBrand() {
    var b = brand(normalize(el.number.value));
    if (b === 'unknown') { b = ''; }
    el.brand.setAttribute('data-brand', b);
    el.brand.textContent = b ? labels[b] : '';
  }

  el.number.addEventListener('input', function () {
    updateBrand();
    if (touched.number || touched.cvv) { show(validate(values(), new Date()), false); }
  });
  order.forEach(function (f) {
    inputs[f].forEach(function (input) {
      input.addEventListener('change', function () { if (input.tagName === 'SELECT' && el.month.value && el.year.value) { touched.expiry = true; } show(validate(values(), new Date()), false); });
      input.addEventListener('blur', function () {
        if (f !== 'expiry' || (el.month.value && el.year.value)) { touched[f] = true; }
        show(validate(values(), new Date()), false);
      });
      input.addEventListener('input', function () { if (touched[f]) { show(validate(values(), new Date()), false); } });
    });
  });

  var submitting = false;
  form.addEventListener('submit', function (ev) {
    if (submitting) { ev.preventDefault(); return; }
    var first = show(validate(values(), new Date()), true);
    if (first) {
      ev.preventDefault();
      first.focus();
      return;
    }
    // Send the number as digits only, as the server expects it.
    el.number.value = normalize(el.number.value);
    submitting = true;
    el.button.disabled = true;
    el.button.textContent = text('processing');
  });
  // Coming back from the next page (back button, page cache): allow a new
  // attempt and do not leave the card number or security code on screen.
  var payLabel = el.button.textContent;
  window.addEventListener('pageshow', function (ev) {
    submitting = false;
    el.button.disabled = false;
    el.button.textContent = payLabel;
    if (ev.persisted) { el.number.value = ''; el.cvv.value = ''; }
    updateBrand();
  });
  updateBrand();
})();
