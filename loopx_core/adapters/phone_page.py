"""The phone's pages (``loopx serve``, ``loopx phone pair``): HTML built here,
every text from the board escaped, one inline script allowed by its nonce.
Nothing is read from a folder: no file an agent could write is ever served."""

from __future__ import annotations

import html
import time
from typing import Any

STYLE = """
body{font:16px/1.4 system-ui,sans-serif;margin:0;padding:12px;max-width:640px;background:#111;color:#eee}
h1{font-size:20px;margin:4px 0 12px}h2{font-size:17px;margin:16px 0 8px}.gate{border:1px solid #444;border-radius:10px;padding:12px;margin:0 0 12px}
.meta{color:#aaa;font-size:13px}.q{margin:8px 0;white-space:pre-wrap;word-break:break-word}
button{font-size:17px;padding:10px 14px;margin:4px 6px 4px 0;border-radius:8px;border:0}
.yes{background:#2a7}.no{background:#a33;color:#fff}.opt{background:#357;color:#fff}
input{font-size:16px;padding:8px;width:70%}.refused{color:#fb3}.diff{font:13px monospace;color:#ccc}
#msg{position:sticky;top:0;background:#222;padding:8px;border-radius:8px}#msg:empty{display:none}
"""

SCRIPT = r"""
const b64u = b => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g,'-').replace(/\//g,'_').replace(/=+$/,'');
const unb64u = s => Uint8Array.from(atob(s.replace(/-/g,'+').replace(/_/g,'/') + '==='.slice((s.length+3)%4)), c => c.charCodeAt(0));
const say = t => { document.getElementById('msg').textContent = t; };
async function post(path, body) {
  const r = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body), credentials: 'omit'});
  const data = await r.json().catch(() => ({error: 'HTTP ' + r.status}));
  if (!r.ok) throw new Error(data.error || ('HTTP ' + r.status));
  return data;
}
async function answer(gate, decision, choice, text) {
  try {
    say('asking your passkey…');
    const c = await post('/api/challenge', {gate, decision, choice, text});
    const o = c.options;
    const ask = () => navigator.credentials.get({publicKey: {
      challenge: unb64u(o.challenge), rpId: o.rpId, timeout: o.timeout, userVerification: o.userVerification,
      allowCredentials: (o.allowCredentials || []).map(a => ({type: a.type, id: unb64u(a.id)}))}});
    let cred;
    try { cred = await ask(); } catch (e) {
      // A browser that wants the passkey asked in the tap itself (the challenge came first): one more tap.
      if (e.name !== 'NotAllowedError') throw e;
      cred = await new Promise((ok, no) => {
        const m = document.getElementById('msg'); m.textContent = '';
        const b = document.createElement('button'); b.className = 'yes'; b.textContent = 'Confirm with your passkey';
        b.onclick = () => ask().then(ok, no); m.append(b);
      });
    }
    const r = cred.response;
    const done = await post('/api/answer', {nonce: c.nonce, credential: {id: cred.id, rawId: b64u(cred.rawId), type: cred.type,
      response: {authenticatorData: b64u(r.authenticatorData), clientDataJSON: b64u(r.clientDataJSON), signature: b64u(r.signature),
      userHandle: r.userHandle ? b64u(r.userHandle) : null}}});
    say(done.message);
    document.getElementById('g-' + gate)?.remove();
  } catch (e) { say('not answered: ' + e.message); }
}
async function pair() {
  try {
    const token = new URLSearchParams(location.hash.slice(1)).get('t') || '';
    const label = document.getElementById('label').value;
    say('making a passkey…');
    const o = (await post('/api/pair/options', {token})).options;
    const cred = await navigator.credentials.create({publicKey: {
      challenge: unb64u(o.challenge), rp: o.rp, user: {id: unb64u(o.user.id), name: o.user.name, displayName: o.user.displayName},
      pubKeyCredParams: o.pubKeyCredParams, timeout: o.timeout, attestation: o.attestation,
      authenticatorSelection: o.authenticatorSelection,
      excludeCredentials: (o.excludeCredentials || []).map(a => ({type: a.type, id: unb64u(a.id)}))}});
    const r = cred.response;
    const done = await post('/api/pair/finish', {token, label, credential: {id: cred.id, rawId: b64u(cred.rawId), type: cred.type,
      response: {clientDataJSON: b64u(r.clientDataJSON), attestationObject: b64u(r.attestationObject)}}});
    say(done.message);
  } catch (e) { say('not paired: ' + e.message); }
}
document.addEventListener('click', ev => {
  const b = ev.target.closest('button'); if (!b) return;
  if (b.dataset.pair !== undefined) return pair();
  const g = b.dataset.gate; if (!g) return;
  const text = b.dataset.text !== undefined ? document.getElementById('t-' + g).value : undefined;
  answer(g, b.dataset.decision, b.dataset.choice, text);
});
"""


def _page(title: str, body: str, nonce: str) -> str:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(title)}</title><style nonce={nonce}>{STYLE}</style></head>"
        f"<body><div id=msg></div>{body}<script nonce={nonce}>{SCRIPT}</script></body></html>"
    )


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def needs_page(items: list[dict[str, Any]], nonce: str, now: float, paused: list[dict[str, Any]] | None = None) -> str:
    """What needs the person: each pending gate with its buttons, then the paused cards."""
    parts = [f"<h1>LoopX — {len(items)} waiting for you</h1>"]
    if not items:
        parts.append("<p>Nothing needs you now.</p>")
    for item in items:
        g = _e(item["gate"])
        age = max(0, int(now - item["asked_at"]))
        scope = f" · scope <b>{_e(item['scope'])}</b>" if item.get("scope") else ""
        parts.append(
            f'<div class=gate id="g-{g}"><div class=meta>{g} · {_e(item["card"])} · {_e(item["agent"])}{scope}'
            f" · {age // 60}m ago</div><div class=q>{_e(item['question'])}</div>"
        )
        diff = item.get("diff")
        if diff:
            rows = "".join(
                f"<div>{_e(path)} +{_e(a if a is not None else '?')} -{_e(r if r is not None else '?')}</div>"
                for path, a, r in diff["files"]
            )
            more = f"<div>… and {_e(diff['more'])} more</div>" if diff["more"] else ""
            parts.append(
                f"<div class=diff>{_e(diff['branch'])} → {_e(diff['base'])}, {_e(diff['commits'])} commit(s), "
                f"head {_e((diff.get('head') or '')[:12])}{rows}{more}</div>"
            )
        if item.get("refused"):
            parts.append(f"<p class=refused>{_e(item['refused'])}</p>")
        else:
            for number, option in enumerate(item.get("options") or (), 1):
                parts.append(
                    f'<button class=opt data-gate="{g}" data-decision=approve data-choice="{number}">{number}. {_e(option)}</button>'
                )
            parts.append(f'<button class=yes data-gate="{g}" data-decision=approve>Approve</button>')
            parts.append(f'<button class=no data-gate="{g}" data-decision=reject>Reject</button>')
            if item["kind"] != "merge":
                parts.append(
                    f'<div><input id="t-{g}" maxlength=2000 placeholder="or answer in words">'
                    f'<button class=opt data-gate="{g}" data-decision=approve data-text>Send</button></div>'
                )
        parts.append("</div>")
    if paused:
        parts.append("<h2>Paused</h2>")
        for card in paused:
            parts.append(
                f"<div class=gate><div class=meta>{_e(card['card'])} · {_e(card['owner'] or 'nobody')} · "
                f"{_e(card['reason'] or 'paused')}</div><div class=q>{_e(card['title'])}</div>"
                "<div class=meta>raise its budget or resume it on the board</div></div>"
            )
    parts.append(f"<p class=meta>as of {_e(time.strftime('%H:%M:%S', time.localtime(now)))} — reload for news</p>")
    return _page("LoopX", "".join(parts), nonce)


def pair_page(nonce: str, person: str) -> str:
    body = (
        f"<h1>Pair this phone with {_e(person)}'s LoopX</h1>"
        "<p>It makes a passkey on this phone (Face ID, fingerprint or PIN). Its public key joins the board as "
        "one of your devices; the passkey itself never leaves the phone.</p>"
        '<p><input id=label maxlength=64 value="phone" aria-label="a name for this device"></p>'
        "<button class=yes data-pair>Make the passkey</button>"
    )
    return _page("Pair — LoopX", body, nonce)
