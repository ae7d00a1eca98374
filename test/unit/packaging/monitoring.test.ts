import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { OPS_METRICS } from '../../../src/admin/extensions';

// js-yaml ships no types (a dev dependency used by the tests only).
const yaml = require('js-yaml') as { load(text: string): unknown };

/**
 * The shipped monitoring files (packaging/prometheus, packaging/grafana): the alert rules pass their
 * promtool unit tests, and every expression in them and in the dashboard names a metric the agent
 * exports (or Prometheus's own `up`).
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
const RULES = path.join(ROOT, 'packaging', 'prometheus', 'alerts.yml');
const RULE_TESTS = path.join(ROOT, 'packaging', 'prometheus', 'alerts.test.yml');
const DASHBOARD = path.join(ROOT, 'packaging', 'grafana', 'estate.json');

/** The metric families src/admin/metrics.ts registers (read from its source, so a rename shows here). */
function exportedFamilies(): Set<string> {
  const source = fs.readFileSync(path.join(ROOT, 'src', 'admin', 'metrics.ts'), 'utf8');
  const names = new Set([...source.matchAll(/'(pos_sync_[a-z0-9_]+)'/g)].map((m) => m[1]!));
  for (const name of Object.keys(OPS_METRICS)) names.add(name);
  names.add('up');
  return names;
}

/** Metric names an expression uses: identifiers followed by `{`, `[`, a space or the end, minus PromQL's own words. */
function metricsIn(expr: string): string[] {
  const words = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'sum', 'min', 'max', 'avg', 'count', 'group', 'stddev', 'stdvar', 'topk', 'bottomk', 'quantile', 'count_values']);
  const stripped = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\{[^}]*\}/g, '{}').replace(/\[[^\]]*\]/g, '');
  const found: string[] = [];
  for (const m of stripped.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\(|\{|\[|\s|$|[-+*/<>=!)])/g)) {
    if (m[2] === '(' || words.has(m[1]!)) continue;
    // Labels inside by (...) are not metrics.
    const before = stripped.slice(0, m.index);
    if (/\b(by|without|on|ignoring)\s*\([^)]*$/.test(before)) continue;
    found.push(m[1]!);
  }
  return found;
}

function family(name: string): string {
  return name.replace(/_(bucket|sum|count)$/, '');
}

describe('shipped monitoring files', () => {
  it('alert rules pass promtool test rules', () => {
    const r = spawnSync('promtool', ['test', 'rules', path.basename(RULE_TESTS)], { cwd: path.dirname(RULE_TESTS), encoding: 'utf8' });
    assert.equal(r.error, undefined, 'promtool is missing: apt-get install prometheus (scripts/test-prerequisites.mjs)');
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /SUCCESS/);
  });

  it('alert rules name only exported metrics, and every alert has a unit test', () => {
    const exported = exportedFamilies();
    const rules = (yaml.load(fs.readFileSync(RULES, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups.flatMap((g) => g.rules);
    assert.ok(rules.length >= 8);
    const tested = fs.readFileSync(RULE_TESTS, 'utf8');
    for (const rule of rules) {
      const used = metricsIn(rule.expr);
      assert.ok(used.length > 0, `${rule.alert}: no metric found in ${rule.expr}`);
      for (const m of used) assert.ok(exported.has(family(m)), `${rule.alert} uses ${m}, which the agent does not export`);
      assert.match(tested, new RegExp(`alertname: ${rule.alert}\\b`), `${rule.alert} has no promtool test`);
    }
  });

  it('the dashboard parses and its queries name only exported metrics', () => {
    const exported = exportedFamilies();
    const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
    assert.ok(exprs.length >= 10);
    for (const { panel, expr } of exprs) {
      const used = metricsIn(expr);
      assert.ok(used.length > 0, `${panel}: no metric in ${expr}`);
      for (const m of used) assert.ok(exported.has(family(m)), `${panel} uses ${m}, which the agent does not export`);
    }
  });

  it('finds metric names in an expression, and not label names or functions', () => {
    assert.deepEqual(metricsIn('sum by (site, le) (rate(pos_sync_apply_duration_seconds_bucket{site=~"a b"}[15m]))'), ['pos_sync_apply_duration_seconds_bucket']);
    assert.deepEqual(metricsIn('pos_sync_a > 1 or pos_sync_b == 1'), ['pos_sync_a', 'pos_sync_b']);
    assert.deepEqual(metricsIn('(x - y) > 0'), ['x', 'y']);
  });
});
