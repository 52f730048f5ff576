#!/usr/bin/env node
// A complete arena bot for Node.js 20 with no dependencies, written from docs/PROTOCOL.md.
//
//   node minimal_bot.js --url ws://127.0.0.1:8765 --name NAME --token TOKEN \
//       --game tic-tac-toe --matches 3
//
// It says hello, seeks one match at a time, answers every turn with a random legal
// action and exits 0 once it has played --matches matches. Node 20 has no WebSocket
// client, so the first half is the client side of RFC 6455 over a TCP socket; the
// second half is the bot. It speaks JSON in text frames (PROTOCOL.md section 2).
'use strict';

const crypto = require('node:crypto');
const net = require('node:net');

// ---- a minimal websocket client (RFC 6455) ----

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'; // fixed by RFC 6455, section 1.3
const OP = { CONT: 0x0, TEXT: 0x1, BINARY: 0x2, CLOSE: 0x8, PING: 0x9, PONG: 0xa };

class WebSocket {
  // Calls onOpen(), onMessage(string), onClose(code, reason); code 1006 = no close frame.
  constructor(url, { onOpen, onMessage, onClose }) {
    const { hostname, port, pathname, search, protocol } = new URL(url);
    if (protocol !== 'ws:') throw new Error(`only ws:// URLs are supported, not ${url}`);
    Object.assign(this, { onOpen, onMessage, onClose });
    this.buffer = Buffer.alloc(0);
    this.open = false; // true between the 101 response and the first close frame
    this.parts = []; // the fragments of a message still being received
    this.closeCode = 1006;
    this.closeReason = '';
    this.key = crypto.randomBytes(16).toString('base64');
    this.socket = net.connect({ host: hostname, port: Number(port || 80) }, () => {
      this.socket.write(
        `GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}:${port || 80}\r\n` +
          'Upgrade: websocket\r\nConnection: Upgrade\r\n' +
          `Sec-WebSocket-Key: ${this.key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    this.handshaking = true;
    this.socket.on('data', (chunk) => this.receive(chunk));
    this.socket.on('error', (err) => { this.closeReason = err.message; });
    this.socket.on('close', () => this.onClose(this.closeCode, this.closeReason));
  }

  receive(chunk) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    if (this.handshaking) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return; // the response headers are not complete yet
      const [status, ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
      this.buffer = this.buffer.subarray(end + 4); // frames may follow in the same chunk
      const headers = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      // The server proves it speaks websocket by hashing our key with the RFC's GUID.
      const accept = crypto.createHash('sha1').update(this.key + GUID).digest('base64');
      if (!/^HTTP\/1\.1 101\b/.test(status) || headers['sec-websocket-accept'] !== accept) {
        return this.fail(`handshake refused: ${status}`);
      }
      this.handshaking = false;
      this.open = true;
      this.onOpen();
    }
    while (this.parseFrame());
  }

  // Takes one complete frame off the buffer and handles it; false when more bytes are needed.
  parseFrame() {
    const b = this.buffer;
    if (b.length < 2) return false;
    const fin = (b[0] & 0x80) !== 0;
    const opcode = b[0] & 0x0f;
    if (b[1] & 0x80) return this.fail('the server masked a frame'); // servers never mask
    let length = b[1] & 0x7f;
    let offset = 2;
    if (length === 126) {
      if (b.length < 4) return false;
      length = b.readUInt16BE(2);
      offset = 4;
    } else if (length === 127) {
      if (b.length < 10) return false;
      length = Number(b.readBigUInt64BE(2));
      offset = 10;
    }
    if (b.length < offset + length) return false;
    const payload = b.subarray(offset, offset + length);
    this.buffer = b.subarray(offset + length);
    if (opcode === OP.PING) {
      this.send(OP.PONG, payload); // a pong echoes the ping's payload
    } else if (opcode === OP.CLOSE) {
      this.closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      this.closeReason = payload.subarray(2).toString('utf8');
      this.send(OP.CLOSE, payload.subarray(0, 2)); // echo the code, unless we closed first
      this.open = false;
      this.socket.end(); // the server closes the TCP connection after the handshake
      return false;
    } else if (opcode === OP.TEXT || opcode === OP.BINARY || opcode === OP.CONT) {
      // Data frames: a message is its first frame plus continuations, up to FIN.
      this.parts.push(payload);
      if (fin) {
        const message = Buffer.concat(this.parts);
        this.parts = [];
        this.onMessage(message.toString('utf8'));
      }
    }
    return true; // a pong needs no answer
  }

  // Client frames are always masked with a fresh random 4-byte key (RFC 6455, 5.3).
  send(opcode, payload) {
    if (!this.open) return;
    const data = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
    // Payload length: 7 bits, or 126 + 16 bits, or 127 + 64 bits; 0x80 sets the mask bit.
    const size = data.length < 126 ? 2 : data.length < 65536 ? 4 : 10;
    const header = Buffer.alloc(size);
    header[0] = 0x80 | opcode; // FIN: this client never fragments what it sends
    if (size === 2) {
      header[1] = 0x80 | data.length;
    } else if (size === 4) {
      header[1] = 0x80 | 126;
      header.writeUInt16BE(data.length, 2);
    } else {
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(BigInt(data.length), 2);
    }
    const mask = crypto.randomBytes(4);
    const masked = Buffer.alloc(data.length);
    for (let i = 0; i < data.length; i++) masked[i] = data[i] ^ mask[i % 4];
    this.socket.write(Buffer.concat([header, mask, masked]));
  }

  sendText(text) { this.send(OP.TEXT, text); }

  // Starts the closing handshake; the server answers with its own close frame.
  close(code = 1000) {
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    this.send(OP.CLOSE, payload);
    this.open = false;
    this.closeCode = code;
    setTimeout(() => this.socket.destroy(), 2000).unref(); // do not wait forever for the answer
  }

  fail(why) {
    this.closeReason = why;
    this.socket.destroy();
    return false;
  }
}

// ---- the bot ----

function parseArgs(argv) {
  const args = { url: 'ws://127.0.0.1:8765', game: 'tic-tac-toe', matches: 1 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!['url', 'name', 'token', 'game', 'matches'].includes(key) || argv[i + 1] === undefined) {
      throw new Error(`unknown or incomplete option ${argv[i]}`);
    }
    args[key] = argv[i + 1];
  }
  args.matches = Number(args.matches);
  if (!args.name || !args.token || !(Number.isInteger(args.matches) && args.matches > 0)) {
    throw new Error('usage: node minimal_bot.js --url URL --name NAME --token TOKEN [--game GAME] [--matches N]');
  }
  return args;
}

function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error(err.message);
    process.exit(2);
  }
  let ended = 0;
  // Every message is one JSON map with `t` (its type) and `v` (the protocol version, 1).
  const send = (t, fields = {}) => ws.sendText(JSON.stringify({ t, v: 1, ...fields }));
  const seek = () => send('seek', { games: [args.game] });

  const handlers = {
    // Seeks are dropped whenever a connection ends, so a bot seeks after every welcome.
    welcome: (m) => {
      console.log(`logged in as ${m.bot}, session ${m.session}`);
      seek();
    },
    seeking: () => {},
    match_start: (m) => console.log(`match ${m.match}: ${m.game}, seat ${m.seat} of ${JSON.stringify(m.players)}`),
    // Answer with the turn's own match, seat, step and attempt, or the move is stale.
    turn: (m) => {
      if (m.legal === null) {
        // Free-form games need a policy that writes `format`; this example gives up.
        send('resign', { match: m.match, detail: 'minimal_bot.js plays only games with a legal list' });
        return;
      }
      const action = m.legal[Math.floor(Math.random() * m.legal.length)];
      send('move', { match: m.match, seat: m.seat, step: m.step, attempt: m.attempt, action });
    },
    move_ack: () => {},
    // A new turn (attempt + 1) follows unless the retries are used up (then match_end).
    move_rejected: (m) => console.error(`move rejected in ${m.match}: ${m.reason}`),
    // One match_end per seat held: one per match, since this bot never plays itself.
    match_end: (m) => {
      ended += 1;
      console.log(`match ${m.match} ended (${m.reason}): returns ${JSON.stringify(m.returns)}`);
      if (ended >= args.matches) ws.close(1000);
      else seek();
    },
    error: (m) => console.error(`error ${m.code} (for ${m.ref ?? 'frame'}): ${m.message}`),
  };

  const ws = new WebSocket(`${args.url.replace(/\/+$/, '')}/bot`, {
    onOpen: () => send('hello', { bot: args.name, token: args.token }),
    onMessage: (text) => {
      const message = JSON.parse(text);
      // Other types (opponent_gone, opponent_back, pong, ...) need no answer here.
      (handlers[message.t] ?? (() => {}))(message);
    },
    onClose: (code, reason) => {
      if (ended >= args.matches && code === 1000) {
        process.exitCode = 0;
        return;
      }
      // The server's close frames say why (4001: unknown bot or wrong token; section 14).
      console.error(`connection closed (${code}${reason ? `: ${reason}` : ''}) after ${ended} of ${args.matches} matches`);
      process.exitCode = 1;
    },
  });
}

main();
