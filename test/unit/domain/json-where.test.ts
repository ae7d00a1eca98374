import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../src/config/load';
import { jsonErrorWhere } from '../../../src/domain/json-where';
import { tempDir } from '../../helpers/fixtures';

/**
 * A configuration or secrets file that does not parse is named with where it breaks, never with its
 * text: the native JSON.parse message quotes the text around the error, which printed part of a
 * bearer token to the service's log.
 */
describe('jsonErrorWhere', () => {
  it('says what was expected, at which line and column', () => {
    assert.equal(jsonErrorWhere('{\n  "a": 1\n  "b": 2\n}'), "expected ',' or '}' in an object at line 3, column 3");
    assert.equal(jsonErrorWhere('{"a": tru}'), 'expected a value at line 1, column 7');
    assert.match(jsonErrorWhere('{"a": "x'), /^unterminated string: unexpected end of input at line 1, column 9$/);
    // A Windows path written with single backslashes, the commonest slip in a hand-edited file.
    assert.equal(jsonErrorWhere('{\n  "dataDir": "C:\\ProgramData\\PosSync"\n}'), 'bad escaped character at line 2, column 18');
  });

  it('never quotes the text', () => {
    const secret = 'Tok3nXYZsecretvalue';
    for (const text of [`{"webhook":{"bearerToken":${secret}}}`, `{"webhook":{"bearerToken":"${secret}"}`, `{"webhook":{"bearerToken":"${secret}",}}`, `{"a":"${secret}" "b":1}`]) {
      let native = '';
      try {
        JSON.parse(text);
      } catch (err) {
        native = (err as Error).message;
      }
      const where = jsonErrorWhere(text);
      assert.ok(!where.includes('Tok3n') && !where.includes('secret'), where);
      // What it replaces: at least one of these quoted the token.
      if (text.startsWith('{"webhook":{"bearerToken":Tok3n')) assert.match(native, /Tok3n/);
    }
  });

  it('is what a configuration file that does not parse reports', () => {
    const file = path.join(tempDir('config-json-'), 'config.json');
    fs.writeFileSync(file, '{\n  "webhook": { "bearerToken": Tok3nXYZsecretvalue }\n}\n');
    assert.throws(
      () => loadConfig({ file, env: {} }),
      (err: Error) => /is not valid JSON: expected a value at line 2, column 31/.test(err.message) && !/Tok3n|secretvalue/.test(err.message),
    );
  });
});
