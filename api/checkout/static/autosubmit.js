(function () {
  'use strict';
  var form = document.getElementById('auto-form');
  if (form) {
    // Call the prototype's submit: a field named "submit" would shadow form.submit.
    HTMLFormElement.prototype.submit.call(form);
  }
})();
