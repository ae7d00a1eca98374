import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { personOf } from '../../../src/admin/person';
import { actorPerson, auditSentence } from '../../../src/domain/audit-text';

const req = (value: string | undefined): Parameters<typeof personOf>[0] => ({ headers: value === undefined ? {} : { 'x-operator-name': value } });

describe('the person using the window', () => {
  it('takes a percent-encoded name, any script, trimmed', () => {
    assert.equal(personOf(req(encodeURIComponent('  Zoë  Ó Brien '))), 'Zoë Ó Brien');
    assert.equal(personOf(req(encodeURIComponent("Nguyễn Thị Hương-O'Neil"))), "Nguyễn Thị Hương-O'Neil");
  });

  it('refuses what is not a name: markup, line breaks, too long, broken encoding, nothing', () => {
    for (const bad of ['<b>x</b>', 'a\nb', 'x'.repeat(61), '%E0%A4%A', '', '   ', 'root (status window)']) assert.equal(personOf(req(bad.startsWith('%') ? bad : encodeURIComponent(bad))), null, bad);
    assert.equal(personOf(req(undefined)), null);
  });
});

describe('audit sentences', () => {
  it('says what was done in plain words, and the person apart from the account', () => {
    assert.equal(auditSentence({ action: 'force-apply', details: { locationId: 8000, changeSequence: 22, reason: 'ticket 881' } }), 'Force-applied update 22 for location 8000 — reason: ticket 881.');
    assert.equal(auditSentence({ action: 'secret-set', details: { name: 'webhook.bearerToken' } }), 'Stored a new webhook.bearerToken.');
    assert.equal(auditSentence({ action: 'secret-shown', details: { name: 'webhook.bearerToken' } }), 'Showed the webhook token (to give head office).');
    assert.equal(auditSentence({ action: 'panel:tunnel:restart', details: { message: 'restarted' } }), 'restart (tunnel): restarted.');
    assert.equal(auditSentence({ action: 'something-new', details: {} }), 'something-new.');
    assert.equal(actorPerson('Zoë (status window on root@vm)'), 'Zoë');
    assert.equal(actorPerson('maria@pc (command line)'), 'maria@pc');
    assert.equal(actorPerson('maria@pc (desktop app)'), 'maria@pc');
    assert.equal(auditSentence({ action: 'login-link', details: { rotated: false } }), 'Took a one-time login link to the status window.');
    assert.match(auditSentence({ action: 'login-link', details: { rotated: true } }), /^Replaced the status window's access token/);
  });
});
