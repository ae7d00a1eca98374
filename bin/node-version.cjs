'use strict';
/* global module */
// Is this Node one the product runs on? Read by bin/pos-sync-agent.cjs before anything else loads,
// so it is written in syntax every Node release can parse (no ?., no ??, no node: imports): an old
// Node must reach the one-line message, not a SyntaxError or a native module's crash.
//
// The supported versions are package.json's `engines.node`, a semver range. The forms npm documents
// for ranges are understood: comparators (>=, >, <=, <, =), bare and partial versions (22, 22.13, 22.x),
// caret and tilde, hyphen ranges (22.13 - 24) and alternatives joined by ||.

var DOWNLOAD = 'https://nodejs.org/en/download';

function parseVersion(text) {
  var m = /^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:[-+].*)?$/.exec(String(text).trim());
  if (!m) return null;
  var parts = [m[1], m[2], m[3]];
  var nums = [];
  for (var i = 0; i < 3; i++) {
    if (parts[i] === undefined || /^[xX*]$/.test(parts[i])) break;
    nums.push(Number(parts[i]));
  }
  return nums; // 0 to 3 numbers: how much of the version was given
}

function compare(a, b) {
  for (var i = 0; i < 3; i++) {
    var d = (a[i] || 0) - (b[i] || 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** The first version above a partial one: 22 -> 23.0.0, 22.13 -> 22.14.0. */
function bumpPartial(p) {
  if (p.length === 0) return null;
  var up = p.slice();
  up[up.length - 1] += 1;
  while (up.length < 3) up.push(0);
  return up;
}

/** One comparator as a list of [operator, version] tests; null when it is not understood. */
function comparator(text) {
  var m = /^(>=|<=|>|<|=|\^|~>?)?\s*(.+)$/.exec(text);
  if (!m) return null;
  var op = m[1] || '';
  var v = parseVersion(m[2]);
  if (!v) return null;
  var full = v.concat([0, 0, 0]).slice(0, 3);
  if (op === '^') {
    var upper;
    if (v.length === 0) return [];
    if (full[0] > 0 || v.length === 1) upper = [full[0] + 1, 0, 0];
    else if (full[1] > 0 || v.length === 2) upper = [0, full[1] + 1, 0];
    else upper = [0, 0, full[2] + 1];
    return [['>=', full], ['<', upper]];
  }
  if (op === '~' || op === '~>') {
    if (v.length === 0) return [];
    return [['>=', full], ['<', v.length === 1 ? [full[0] + 1, 0, 0] : [full[0], full[1] + 1, 0]]];
  }
  if (op === '' || op === '=') {
    if (v.length === 0) return [];
    if (v.length === 3) return [['=', full]];
    return [['>=', full], ['<', bumpPartial(v)]];
  }
  if (v.length === 0) return op === '<' || op === '>' ? [['<', [0, 0, 0]]] : [];
  if (op === '>') return v.length === 3 ? [['>', full]] : [['>=', bumpPartial(v)]];
  if (op === '<=') return v.length === 3 ? [['<=', full]] : [['<', bumpPartial(v)]];
  return [[op, full]];
}

function test(version, op, bound) {
  var c = compare(version, bound);
  if (op === '>=') return c >= 0;
  if (op === '>') return c > 0;
  if (op === '<=') return c <= 0;
  if (op === '<') return c < 0;
  return c === 0;
}

/** true, false, or null when the range is not understood (then nobody is turned away). */
function satisfies(versionText, range) {
  var version = parseVersion(versionText);
  if (!version || version.length !== 3) return null;
  var alternatives = String(range).split('||');
  var understood = false;
  for (var i = 0; i < alternatives.length; i++) {
    var alt = alternatives[i].trim();
    var hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(alt);
    var tests = [];
    if (hyphen) {
      var lo = comparator('>=' + hyphen[1]);
      var hiV = parseVersion(hyphen[2]);
      if (!lo || !hiV) return null;
      tests = lo.concat(hiV.length === 3 ? [['<=', hiV]] : hiV.length === 0 ? [] : [['<', bumpPartial(hiV)]]);
    } else {
      var words = alt.replace(/(>=|<=|>|<|=|\^|~>?)\s+/g, '$1').split(/\s+/).filter(Boolean);
      for (var w = 0; w < words.length; w++) {
        var c = comparator(words[w]);
        if (!c) return null;
        tests = tests.concat(c);
      }
    }
    understood = true;
    var ok = true;
    for (var t = 0; t < tests.length; t++) if (!test(version, tests[t][0], tests[t][1])) ok = false;
    if (ok) return true;
  }
  return understood ? false : null;
}

/** The one line an unsupported Node gets, or null when this Node will do. */
function versionProblem(versionText, range, execPath) {
  if (typeof range !== 'string' || range.trim() === '') return null;
  if (satisfies(versionText, range) !== false) return null;
  return 'pos-sync-agent needs Node.js ' + range.trim() + ' but found ' + versionText + (execPath ? ' (' + execPath + ')' : '') +
    '; get a supported LTS release from ' + DOWNLOAD + ' and put it first on PATH.';
}

module.exports = { satisfies: satisfies, versionProblem: versionProblem, DOWNLOAD: DOWNLOAD };
