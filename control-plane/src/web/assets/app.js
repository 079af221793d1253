// The dashboard's only script. Pages work without it; it adds live regions, copy buttons,
// confirmations, tooltips of bar strips, the auto-submit of the project switcher and the list
// filters, and on the monitor form the fields of the check type chosen and its lists of rows.
// Served by us, no inline code (strict CSP).
(function () {
  'use strict';

  // Live regions: <div data-live="/app/monitors?fragment=1" data-live-every="5000"> is refreshed
  // with the fragment the server renders, while the tab is visible.
  function startLive(el) {
    var url = el.getAttribute('data-live');
    var every = Number(el.getAttribute('data-live-every')) || 5000;
    var busy = false;
    var last = null;
    function tick() {
      if (busy || document.visibilityState !== 'visible') return;
      busy = true;
      fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' }, redirect: 'manual' })
        .then(function (res) {
          if (res.status !== 200) throw new Error('status ' + res.status);
          return res.text();
        })
        .then(function (text) {
          if (text !== last) {
            last = text;
            // What the reader opened (a ping's body) stays open through the refresh.
            var open = [].map.call(el.querySelectorAll('details[open][data-key]'), function (d) {
              return d.getAttribute('data-key');
            });
            el.innerHTML = text;
            open.forEach(function (key) {
              var again = el.querySelector('details[data-key="' + CSS.escape(key) + '"]');
              if (again) again.open = true;
            });
            el.setAttribute('data-live-updated', String(Date.now()));
          }
        })
        .catch(function () {})
        .then(function () {
          busy = false;
        });
    }
    setInterval(tick, every);
    document.addEventListener('visibilitychange', tick);
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'sr-only';
    document.body.appendChild(area);
    area.select();
    try {
      document.execCommand('copy');
    } finally {
      document.body.removeChild(area);
    }
    return Promise.resolve();
  }

  document.addEventListener('click', function (event) {
    var button = event.target.closest ? event.target.closest('[data-copy]') : null;
    if (!button) return;
    event.preventDefault();
    var label = button.textContent;
    copyText(button.getAttribute('data-copy')).then(
      function () {
        button.textContent = 'Copied';
        button.setAttribute('data-copied', 'true');
      },
      function () {
        button.textContent = 'Press Ctrl+C';
      },
    );
    setTimeout(function () {
      button.textContent = label;
    }, 1600);
  });

  document.addEventListener(
    'submit',
    function (event) {
      var form = event.target;
      var question = form.getAttribute && form.getAttribute('data-confirm');
      if (question && !window.confirm(question)) event.preventDefault();
    },
    true,
  );

  document.addEventListener('change', function (event) {
    var el = event.target;
    if (el.hasAttribute && el.hasAttribute('data-autosubmit') && el.form)
      el.form.requestSubmit ? el.form.requestSubmit() : el.form.submit();
    if (el.name === 'schedule_kind') showSchedule(el.form);
    if (el.name === 'type' && el.form && el.form.hasAttribute('data-check-form')) showType(el.form);
  });

  // The heartbeat and maintenance window forms show the fields of the schedule kind chosen.
  function showSchedule(form) {
    if (!form) return;
    var chosen = form.querySelector('[name="schedule_kind"]:checked');
    var kind = chosen ? chosen.value : 'cron';
    form.querySelectorAll('[data-schedule]').forEach(function (el) {
      el.hidden = el.getAttribute('data-schedule') !== kind;
    });
  }

  // The monitor form shows the fields of the check type chosen and labels its URL for it. Without
  // this script every type's fields are shown, and the server reads those of the type chosen.
  function showType(form) {
    var type = form.querySelector('select[name="type"]').value;
    form.querySelectorAll('[data-types]').forEach(function (el) {
      el.hidden = el.getAttribute('data-types').split(' ').indexOf(type) < 0;
    });
    var url = form.querySelector('[data-address-by-type]');
    if (!url) return;
    url.placeholder = url.getAttribute('data-placeholder-' + type) || '';
    var label = form.querySelector('label[for="' + url.id + '"]');
    if (label) label.textContent = url.getAttribute('data-label-' + type) || 'URL';
    var help = url.parentNode.querySelector('[data-help-by-type]');
    if (help) help.textContent = url.getAttribute('data-help-' + type) || '';
  }

  // Lists of rows on the monitor form (headers, assertions) and the status page form (groups, and
  // the components of each) show their filled rows and one empty row, and a button shows the next
  // empty one. Without this script every row is shown. A row is a child of its list: lists nest.
  function compactRows(list) {
    var empty = list.querySelectorAll(':scope > [data-row-empty]');
    if (empty.length < 2) return;
    for (var i = 1; i < empty.length; i++) empty[i].hidden = true;
    var add = document.createElement('button');
    add.type = 'button';
    add.className = 'btn btn-sm add-row';
    add.textContent = list.getAttribute('data-rows');
    add.addEventListener('click', function () {
      var next = list.querySelector(':scope > [data-row-empty][hidden]');
      if (next) {
        next.hidden = false;
        next.querySelector('input, select').focus();
      }
      add.hidden = !list.querySelector(':scope > [data-row-empty][hidden]');
    });
    list.parentNode.insertBefore(add, list.nextSibling);
  }

  // Tooltips of bar strips (<svg data-tips>): each bar's <title> is the browser's own tooltip
  // without this script; with it, hovering or tapping a bar shows the text in one box, which
  // phones show too. The <title> moves into data-tip so the browser's tooltip does not show twice.
  var tip = null;
  var tipFor = null;
  function barOf(target) {
    var bar = target && target.closest ? target.closest('[data-tips] > *') : null;
    if (!bar) return null;
    if (!bar.hasAttribute('data-tip')) {
      var title = bar.querySelector('title');
      if (!title) return null;
      bar.setAttribute('data-tip', title.textContent);
      title.remove();
    }
    return bar;
  }
  function showTip(bar) {
    if (!tip) {
      tip = document.createElement('div');
      tip.className = 'tip';
      tip.setAttribute('role', 'tooltip');
      document.body.appendChild(tip);
    }
    tipFor = bar;
    tip.textContent = bar.getAttribute('data-tip');
    tip.hidden = false;
    var box = bar.getBoundingClientRect();
    var width = document.documentElement.clientWidth;
    var left = Math.min(Math.max(8, box.left + box.width / 2 - tip.offsetWidth / 2), width - tip.offsetWidth - 8);
    var top = box.top - tip.offsetHeight - 8;
    if (top < 8) top = box.bottom + 8;
    tip.style.left = left + window.scrollX + 'px';
    tip.style.top = top + window.scrollY + 'px';
  }
  function hideTip() {
    if (tip) tip.hidden = true;
    tipFor = null;
  }
  document.addEventListener('mouseover', function (event) {
    var bar = barOf(event.target);
    if (bar) showTip(bar);
    else if (tipFor) hideTip();
  });
  document.addEventListener('click', function (event) {
    var bar = barOf(event.target);
    if (bar && bar !== tipFor) showTip(bar);
    else hideTip();
  });
  document.addEventListener('keydown', function (event) {
    if (event.key === 'Escape') hideTip();
  });
  window.addEventListener('scroll', hideTip, { passive: true });

  document.querySelectorAll('[data-live]').forEach(startLive);
  document.querySelectorAll('form').forEach(function (f) {
    if (f.querySelector('[name="schedule_kind"]')) showSchedule(f);
  });
  document.querySelectorAll('form[data-check-form]').forEach(showType);
  document.querySelectorAll('[data-rows]').forEach(compactRows);
  document.querySelectorAll('[data-autosubmit]').forEach(function (el) {
    var fallback = el.form && el.form.querySelector('.js-hide');
    if (fallback) fallback.hidden = true;
  });
})();
