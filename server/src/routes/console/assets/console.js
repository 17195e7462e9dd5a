// The console's own script: enhancements only. Every page works without it.
// - A "Copy" button beside what is shown once (a new key, a secret, a one-time link).
// - On the review page, the value being edited marks its source in the input beside it.
(function () {
  'use strict';
  var sk = (document.documentElement.lang || 'sk') === 'sk';
  var words = sk ? { copy: 'Kopírovať', copied: 'Skopírované', failed: 'Nedá sa kopírovať' }
                 : { copy: 'Copy', copied: 'Copied', failed: 'Cannot copy' };

  document.querySelectorAll('[data-copy]').forEach(function (el) {
    if (!navigator.clipboard) return;
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'quiet copy';
    button.textContent = words.copy;
    var status = document.createElement('span');
    status.setAttribute('role', 'status');
    status.className = 'hint';
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(el.textContent.trim()).then(
        function () { status.textContent = words.copied; },
        function () { status.textContent = words.failed; });
    });
    el.insertAdjacentElement('afterend', status);
    el.insertAdjacentElement('afterend', button);
  });

  document.querySelectorAll('tr.field input[name^="v:"]').forEach(function (input) {
    var row = input.closest('tr');
    var source = row && document.getElementById('src-' + row.id.slice(2));
    if (!source) return;
    var mark = function (on) { source.classList.toggle('active', on); };
    input.addEventListener('focus', function () { mark(true); });
    input.addEventListener('blur', function () { mark(false); });
  });
})();
