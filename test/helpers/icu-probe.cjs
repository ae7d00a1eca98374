// Preloaded with `node --require` (NODE_OPTIONS) into a child `pos-sync-agent serve`, on every thread:
// appends a line to the file named by POS_SYNC_ICU_CALLS_FILE for each call, by the agent, of a
// function that makes V8 build an ICU formatter, collator or normaliser (Intl's constructors, the
// toLocale* methods, localeCompare, normalize). Each pages ICU's data and code into the process for
// as long as it runs (docs/performance.md). Date's own local fields are not counted: they read only
// the machine's timezone.
const fs = require('node:fs');
const { threadId } = require('node:worker_threads');

const out = process.env.POS_SYNC_ICU_CALLS_FILE;
if (out) {
  const record = (what) => {
    const frames = (new Error().stack ?? '').split('\n').slice(3, 6).map((s) => s.trim()).join(' < ');
    fs.appendFileSync(out, `thread ${threadId}: ${what} at ${frames}\n`);
  };
  const wrapMethod = (owner, name, label) => {
    const original = owner[name];
    Object.defineProperty(owner, name, {
      configurable: true,
      writable: true,
      value: function (...args) {
        record(label);
        return original.apply(this, args);
      },
    });
  };
  for (const name of ['DateTimeFormat', 'NumberFormat', 'Collator', 'PluralRules', 'RelativeTimeFormat', 'ListFormat', 'DisplayNames', 'Segmenter', 'Locale']) {
    const Original = Intl[name];
    const Wrapped = function (...args) {
      record(`Intl.${name}`);
      return new Original(...args);
    };
    Wrapped.prototype = Original.prototype;
    Object.setPrototypeOf(Wrapped, Original);
    Intl[name] = Wrapped;
  }
  wrapMethod(Intl, 'supportedValuesOf', 'Intl.supportedValuesOf');
  wrapMethod(String.prototype, 'localeCompare', 'String.prototype.localeCompare');
  wrapMethod(String.prototype, 'normalize', 'String.prototype.normalize');
  wrapMethod(String.prototype, 'toLocaleUpperCase', 'String.prototype.toLocaleUpperCase');
  wrapMethod(String.prototype, 'toLocaleLowerCase', 'String.prototype.toLocaleLowerCase');
  wrapMethod(Number.prototype, 'toLocaleString', 'Number.prototype.toLocaleString');
  wrapMethod(BigInt.prototype, 'toLocaleString', 'BigInt.prototype.toLocaleString');
  wrapMethod(Array.prototype, 'toLocaleString', 'Array.prototype.toLocaleString');
  for (const name of ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']) wrapMethod(Date.prototype, name, `Date.prototype.${name}`);
}
