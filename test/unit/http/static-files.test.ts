import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { resolveUnder, staticFiles } from '../../../src/http/static-files';
import { tempDir } from '../../helpers/fixtures';
import { send, serve } from './serve';

/**
 * Serving the status window's build folder (src/http/static-files.ts), which replaced express.static:
 * real files in a temp folder, real HTTP on loopback, requests sent byte for byte (no client
 * normalises the paths that try to climb out).
 */

const SECRET = 'outside the folder: must never be served';

function site(): { root: string; files: Record<string, Buffer> } {
  const parent = tempDir();
  const root = path.join(parent, 'www');
  const files: Record<string, Buffer> = {
    'index.html': Buffer.from('<!doctype html><title>POS Sync Agent</title>'),
    'app.js': Buffer.from('"use strict";console.log(1);\n'),
    'app.css': Buffer.from('body{margin:0}\n'),
    'app.js.map': Buffer.from('{"version":3}'),
    'logo.svg': Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'),
    'icon.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]),
    'favicon.ico': Buffer.from([0, 0, 1, 0]),
    'font.woff2': Buffer.from('wOF2'),
    'UPPER.JS': Buffer.from('1;'),
    README: Buffer.from('plain'),
    'data.unknownext': Buffer.from('?'),
    '.env': Buffer.from('TOKEN=secret'),
    '.git/config': Buffer.from('[core]'),
    'sub/index.html': Buffer.from('<p>sub index</p>'),
    'sub/page.html': Buffer.from('<p>sub page</p>'),
  };
  for (const [name, bytes] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), bytes);
  }
  fs.mkdirSync(path.join(root, 'empty'));
  fs.writeFileSync(path.join(parent, 'secret.txt'), SECRET);
  fs.mkdirSync(path.join(parent, 'www-evil'));
  fs.writeFileSync(path.join(parent, 'www-evil', 'x.txt'), SECRET);
  // A link that leads nowhere but to itself: stat fails with ELOOP, an error that is not "not there".
  fs.symlinkSync('loop', path.join(root, 'loop'));
  return { root, files };
}

describe('static files over HTTP', async () => {
  const { root, files } = site();
  const port = await serve((app) => {
    // What the window's access checks set on every answer before the files are reached.
    app.use((_req, res, next) => {
      res.setHeader('X-Frame-Options', 'DENY');
      next();
    });
    app.use(staticFiles(root, { headers: (res) => res.setHeader('Cache-Control', 'no-store') }));
  });
  const get = (target: string, method = 'GET') => send(port, `${method} ${target} HTTP/1.1`);

  it('serves / as index.html, with its type, length, no-store and the headers set before', async () => {
    for (const target of ['/', '/?login=abc', '/index.html', '/index.html?x=1&y=2']) {
      const a = await get(target);
      assert.equal(a.status, 200, target);
      assert.deepEqual(a.body, files['index.html'], target);
      assert.equal(a.header('content-type'), 'text/html; charset=utf-8');
      assert.equal(a.header('content-length'), String(files['index.html']!.length));
      assert.equal(a.header('cache-control'), 'no-store');
      assert.equal(a.header('x-frame-options'), 'DENY');
      assert.equal(a.header('etag'), undefined);
      assert.equal(a.header('x-powered-by'), undefined);
    }
  });

  it('names each file type as express.static did', async () => {
    const types: [string, string][] = [
      ['/app.js', 'text/javascript; charset=utf-8'],
      ['/app.css', 'text/css; charset=utf-8'],
      ['/app.js.map', 'application/json; charset=utf-8'],
      ['/logo.svg', 'image/svg+xml'],
      ['/icon.png', 'image/png'],
      ['/favicon.ico', 'image/vnd.microsoft.icon'],
      ['/font.woff2', 'font/woff2'],
      ['/UPPER.JS', 'text/javascript; charset=utf-8'],
      ['/README', 'application/octet-stream'],
      ['/data.unknownext', 'application/octet-stream'],
      ['/sub/page.html', 'text/html; charset=utf-8'],
    ];
    for (const [target, type] of types) {
      const a = await get(target);
      assert.equal(a.status, 200, target);
      assert.equal(a.header('content-type'), type, target);
      assert.deepEqual(a.body, files[target.slice(1)], target);
      assert.equal(a.header('content-length'), String(files[target.slice(1)]!.length), target);
    }
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    for (const target of ['/', '/app.js', '/icon.png']) {
      const head = await get(target, 'HEAD');
      const full = await get(target);
      assert.equal(head.status, 200);
      assert.equal(head.body.length, 0);
      assert.deepEqual(head.headers.filter(([k]) => k !== 'date'), full.headers.filter(([k]) => k !== 'date'));
    }
  });

  it('passes every other method on (the app answers 404)', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const a = await get('/app.js', method);
      assert.equal(a.status, 404, method);
      assert.deepEqual(a.json(), { error: { id: 'not_found', message: 'no such endpoint' } });
    }
  });

  it('answers an unknown file, a folder and a file as a folder with 404: no listing, no redirect', async () => {
    for (const target of ['/nope.js', '/sub', '/empty', '/empty/', '/app.js/', '/index.html/', '/sub/nope/', '/nope/']) {
      const a = await get(target);
      assert.equal(a.status, 404, target);
      assert.equal(a.header('location'), undefined, target);
      assert.deepEqual(a.json(), { error: { id: 'not_found', message: 'no such endpoint' } }, target);
    }
    const index = await get('/sub/');
    assert.equal(index.status, 200, 'a folder with a slash serves its index.html');
    assert.deepEqual(index.body, files['sub/index.html']);
  });

  it('ignores dotfiles and dot-folders (404), however they are spelt', async () => {
    for (const target of ['/.env', '/%2eenv', '/.git/config', '/.git/', '/.git', '/sub/../.env', '/sub/%2e%2e/.env', '/./.env']) {
      const a = await get(target);
      assert.equal(a.status, 404, target);
      assert.doesNotMatch(a.body.toString(), /TOKEN=secret|\[core\]/, target);
    }
  });

  it('never leaves the folder: .. in every spelling is refused with 404', async () => {
    const attempts = [
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/%2E%2E/secret.txt',
      '/..%2fsecret.txt',
      '/..%2Fsecret.txt',
      '/%2e%2e%2fsecret.txt',
      '/sub/../../secret.txt',
      '/sub/..%2f..%2fsecret.txt',
      '/sub/%2e%2e/%2e%2e/secret.txt',
      '/..%5csecret.txt',
      '/%2e%2e%5csecret.txt',
      '/..\\secret.txt',
      '/sub\\..\\..\\secret.txt',
      '//../secret.txt',
      '/../www-evil/x.txt',
      '/..%2fwww-evil%2fx.txt',
      '/..',
      '/%2e%2e',
    ];
    for (const target of attempts) {
      const a = await get(target);
      assert.equal(a.status, 404, target);
      assert.ok(!a.body.toString().includes(SECRET), `${target} served the secret`);
    }
  });

  it('refuses a NUL and a path that does not decode (404)', async () => {
    for (const target of ['/app.js%00', '/app.js%00.png', '/%00', '/%E0%A4%A', '/%', '/app%2']) {
      const a = await get(target);
      assert.equal(a.status, 404, target);
    }
  });

  it('reads the path as express did: dot segments inside the folder, %2f and the fragment', async () => {
    for (const target of ['/sub/../app.js', '/./app.js', '/%2e/app.js', '/%2fapp.js', '//app.js', '/app%2ejs', '/app.js#frag', '/app.js?x#y']) {
      const a = await get(target);
      assert.equal(a.status, 200, target);
      assert.deepEqual(a.body, files['app.js'], target);
    }
  });

  it('opens only regular files: a named pipe, and a name Windows opens as a device, are 404', { skip: process.platform === 'win32' ? 'mkfifo and device-named files are Linux-only here' : false }, async () => {
    // A reader of a FIFO waits for a writer: served, the request would hang and hold a thread.
    execFileSync('mkfifo', [path.join(root, 'pipe.js')]);
    fs.writeFileSync(path.join(root, 'con.js'), 'a file here; on Windows the console');
    fs.writeFileSync(path.join(root, 'aux'), 'a file here; on Windows a device');
    for (const target of ['/pipe.js', '/con.js', '/CON.JS', '/aux', '/app.js%3a%3a$DATA', '/app.js.', '/app.js%20']) {
      const a = await get(target);
      assert.equal(a.status, 404, target);
    }
  });

  it('a file that cannot be read for another reason is an error (500), not a 404', async () => {
    const a = await get('/loop');
    assert.equal(a.status, 500);
    assert.deepEqual(a.json(), { error: { id: 'internal_error', message: 'internal error; see the agent log' } });
  });
});

describe('the file a path names', () => {
  const root = path.resolve('/srv/www');
  it('stays under the folder, or is none', () => {
    assert.equal(resolveUnder(root, '/app.js'), path.join(root, 'app.js'));
    assert.equal(resolveUnder(root, '/'), path.join(root, 'index.html'));
    assert.equal(resolveUnder(root, '/sub/'), path.join(root, 'sub', 'index.html'));
    assert.equal(resolveUnder(root, '/a/b/../c.js'), path.join(root, 'a', 'c.js'));
    for (const bad of ['/../x', '/%2e%2e/x', '/a/../../x', '/..%5cx', '/.env', '/a/.git/x', '/%00', '/%zz']) assert.equal(resolveUnder(root, bad), null, bad);
    // What Windows reads as a device, a stream or a drive, or trims, in any case and with any extension.
    for (const bad of ['/CON', '/con.txt', '/sub/nul', '/Nul.js', '/COM1.js', '/lpt9', '/com%C2%B9', '/CONIN$', '/prn.html', '/app.js::$DATA', '/app.js%3A%3A%24DATA', '/c:/windows/win.ini', '/app.js.', '/app.js%20', '/sub./app.js']) {
      assert.equal(resolveUnder(root, bad), null, bad);
    }
    // Names that only look like them are files.
    for (const good of ['/console.js', '/connect.js', '/com10.js', '/lpt.js', '/auxiliary.css', '/nul-free.js']) assert.equal(resolveUnder(root, good), path.join(root, good.slice(1)), good);
  });
});
