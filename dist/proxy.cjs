"use strict";
var __create = Object.create;
var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __getProtoOf = Object.getPrototypeOf;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let key of __getOwnPropNames(from))
      if (!__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return to;
};
var __toESM = (mod, isNodeMode, target) => (target = mod != null ? __create(__getProtoOf(mod)) : {}, __copyProps(
  // If the importer is in node compatibility mode or this is not an ESM
  // file that has been converted to a CommonJS file using a Babel-
  // compatible transform (i.e. "__esModule" has not been set), then set
  // "default" to the CommonJS "module.exports" for node compatibility.
  isNodeMode || !mod || !mod.__esModule ? __defProp(target, "default", { value: mod, enumerable: true }) : target,
  mod
));

// src/egress/proxy.ts
var import_node_crypto = require("node:crypto");
var dns = __toESM(require("node:dns"), 1);
var http = __toESM(require("node:http"), 1);
var https = __toESM(require("node:https"), 1);
var net2 = __toESM(require("node:net"), 1);
var tls = __toESM(require("node:tls"), 1);

// src/egress/policy.ts
var net = __toESM(require("node:net"), 1);
var LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
function normalizeHost(raw) {
  let h = raw.trim().toLowerCase();
  if (h.endsWith(".")) h = h.slice(0, -1);
  if (h === "" || h.length > 253) return void 0;
  if (!h.split(".").every((l) => LABEL.test(l))) return void 0;
  return h;
}
function isIpLiteral(raw) {
  const h = raw.startsWith("[") && raw.endsWith("]") ? raw.slice(1, -1) : raw;
  if (net.isIP(h) !== 0) return true;
  const labels = h.split(".");
  return labels.length <= 4 && labels.every((l) => /^(0x[0-9a-f]*|[0-9]+)$/i.test(l));
}
function ruleMatches(rule, host, port) {
  if (!rule.ports.includes(port)) return false;
  if (rule.wildcard) return host.endsWith(`.${rule.host}`);
  return host === rule.host;
}
function checkHost(rules, mappings, rawHost, port) {
  if (isIpLiteral(rawHost)) {
    return { ok: false, reason: "ip-literal", detail: "IP addresses are never allowed" };
  }
  const host = normalizeHost(rawHost);
  if (host === void 0) return { ok: false, reason: "bad-request", detail: "not a DNS name" };
  if (!rules.some((r) => ruleMatches(r, host, port))) {
    return { ok: false, reason: "not-allowlisted", detail: `${host}:${port} is not in allow-hosts` };
  }
  const mapping = mappings.find((m) => m.host === host);
  return mapping ? { ok: true, host, mapping } : { ok: true, host };
}
var BLOCKED_V4 = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4]
];
var BLOCKED_V6 = [
  ["::", 128],
  ["::1", 128],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8]
];
var blocked = new net.BlockList();
for (const [a, p] of BLOCKED_V4) blocked.addSubnet(a, p, "ipv4");
for (const [a, p] of BLOCKED_V6) blocked.addSubnet(a, p, "ipv6");
function isNonPublicAddress(address) {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, "ipv4");
  if (family !== 6) return true;
  const lower = address.toLowerCase();
  const embedded = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (embedded) return isNonPublicAddress(embedded[1]);
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hexMapped) {
    const hi = parseInt(hexMapped[1], 16);
    const lo = parseInt(hexMapped[2], 16);
    return isNonPublicAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  return blocked.check(address, "ipv6");
}
function splitHostPort(authority, defaultPort) {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority);
  const m = v6 ?? /^([^:[\]]+)(?::(\d+))?$/.exec(authority);
  if (!m) return void 0;
  const p = m[2] !== void 0 ? Number(m[2]) : defaultPort;
  if (p === void 0 || !Number.isInteger(p) || p < 1 || p > 65535) return void 0;
  return { host: v6 ? `[${m[1]}]` : m[1], port: p };
}

// src/egress/proxy.ts
var HOP_BY_HOP = /* @__PURE__ */ new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host"
]);
var SECRET_HEADERS = /* @__PURE__ */ new Set([
  "authorization",
  "x-api-key",
  "x-goog-api-key",
  "api-key",
  "cookie",
  "set-cookie",
  "proxy-authorization"
]);
var IDLE_MS = 10 * 6e4;
function redactHeaders(headers, extra = []) {
  const out = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === void 0) continue;
    const key = k.toLowerCase();
    out[key] = SECRET_HEADERS.has(key) || extra.includes(key) ? "[REDACTED]" : Array.isArray(v) ? v.join(", ") : String(v);
  }
  return out;
}
var Recorder = class {
  constructor(cap) {
    this.cap = cap;
  }
  cap;
  chunks = [];
  kept = 0;
  hash = (0, import_node_crypto.createHash)("sha256");
  bytes = 0;
  push(chunk) {
    this.bytes += chunk.length;
    this.hash.update(chunk);
    if (this.kept < this.cap) {
      const part = chunk.subarray(0, this.cap - this.kept);
      this.chunks.push(part);
      this.kept += part.length;
    }
  }
  body(redact) {
    return {
      bytes: this.bytes,
      sha256: this.hash.digest("hex"),
      truncated: this.kept < this.bytes,
      text: redact(Buffer.concat(this.chunks).toString("utf8"))
    };
  }
};
var EgressProxy = class {
  constructor(config, emit) {
    this.config = config;
    this.emit = emit;
    this.secureContext = config.extraCa ? tls.createSecureContext({ ca: [...tls.rootCertificates, config.extraCa] }) : void 0;
    this.secrets = config.credentials.map((c) => c.secret).filter((s) => s.length > 0);
    this.server = http.createServer({ requestTimeout: 0 }, (req, res) => {
      this.onRequest(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
    });
    this.server.on("connect", (req, socket, head) => {
      this.onConnect(req, socket, head).catch(() => socket.destroy());
    });
    this.server.maxConnections = 512;
    this.server.on("clientError", (_err, socket) => {
      socket.destroy();
    });
  }
  config;
  emit;
  server;
  open = /* @__PURE__ */ new Set();
  /** Upstream connections are kept alive and reused (TLS handshakes and CA parsing are costly). */
  httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64 });
  secureContext;
  secrets;
  listen() {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.config.listen.port, this.config.listen.host, () => {
        resolve(this.server.address());
      });
    });
  }
  /** Stops accepting, reports the connections still open with their bytes so far. */
  async close() {
    for (const o of this.open) this.finish(o);
    this.open.clear();
    this.server.closeAllConnections?.();
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
    await new Promise((resolve) => this.server.close(() => resolve()));
  }
  redact(text) {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join("[REDACTED]");
    return out;
  }
  track(event) {
    const o = { event, started: Date.now() };
    this.open.add(o);
    return o;
  }
  finish(o) {
    if (!this.open.delete(o)) return;
    o.event.durationMs = Date.now() - o.started;
    this.emit(o.event);
  }
  deny(kind, method, host, port, reason, detail) {
    this.emit({
      type: "egress",
      time: (/* @__PURE__ */ new Date()).toISOString(),
      kind,
      method,
      host: this.redact(host).slice(0, 300),
      port,
      allowed: false,
      reason,
      detail,
      bytesUp: 0,
      bytesDown: 0,
      durationMs: 0
    });
  }
  /** The address to connect to: the host-map entry, or a public address from DNS. */
  async resolve(host, port, mapping) {
    if (mapping) return { address: mapping.address, port: mapping.port ?? port };
    let addresses;
    try {
      addresses = await dns.promises.lookup(host, { all: true, verbatim: true });
    } catch (error) {
      return { reason: "dns-failed", detail: error.code ?? "lookup" };
    }
    if (addresses.length === 0) return { reason: "dns-failed", detail: "no address" };
    const bad = addresses.find((a) => isNonPublicAddress(a.address));
    if (bad) {
      return {
        reason: "private-address",
        detail: `${host} resolves to ${bad.address}, a non-public address (configure host-map to allow it)`,
        address: bad.address
      };
    }
    return { address: addresses[0].address, port };
  }
  async onConnect(req, client, head) {
    const target = splitHostPort(req.url ?? "");
    if (!target) {
      this.deny("connect", "CONNECT", req.url ?? "", 0, "bad-request", "not host:port");
      client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
      return;
    }
    const check = checkHost(this.config.allow, this.config.hostMap, target.host, target.port);
    if (!check.ok) {
      this.deny("connect", "CONNECT", target.host, target.port, check.reason, check.detail);
      client.end(`HTTP/1.1 403 Forbidden\r
X-Airlock-Denied: ${check.reason}\r
\r
`);
      return;
    }
    const to = await this.resolve(check.host, target.port, check.mapping);
    if ("reason" in to) {
      this.deny("connect", "CONNECT", check.host, target.port, to.reason, to.detail);
      client.end(`HTTP/1.1 403 Forbidden\r
X-Airlock-Denied: ${to.reason}\r
\r
`);
      return;
    }
    const o = this.track({
      type: "egress",
      time: (/* @__PURE__ */ new Date()).toISOString(),
      kind: "connect",
      method: "CONNECT",
      host: check.host,
      port: target.port,
      allowed: true,
      address: to.address,
      bytesUp: 0,
      bytesDown: 0,
      durationMs: 0
    });
    const upstream = net2.connect({ host: to.address, port: to.port });
    let connected = false;
    upstream.setTimeout(IDLE_MS, () => upstream.destroy());
    client.on("error", () => upstream.destroy());
    upstream.on("error", (error) => {
      if (!connected) {
        o.event.allowed = false;
        o.event.reason = "connect-failed";
        o.event.detail = error.code ?? error.message;
        client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
      }
      client.destroy();
    });
    upstream.once("connect", () => {
      connected = true;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) {
        o.event.bytesUp += head.length;
        upstream.write(head);
      }
      client.on("data", (c) => o.event.bytesUp += c.length);
      upstream.on("data", (c) => o.event.bytesDown += c.length);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    const done = () => {
      upstream.destroy();
      client.destroy();
      this.finish(o);
    };
    upstream.on("close", done);
    client.on("close", done);
  }
  async onRequest(req, res) {
    const raw = req.url ?? "";
    if (raw.startsWith("/")) return this.onCredential(req, res, raw);
    let url;
    try {
      url = new URL(raw);
    } catch {
      this.deny("http", req.method ?? "?", raw.slice(0, 200), 0, "bad-request", "not a URL");
      res.writeHead(400).end();
      return;
    }
    const hostname = url.hostname.replace(/^\[|\]$/g, "");
    if (url.protocol === "http:" && this.config.selfNames.includes(normalizeHost(hostname) ?? "")) {
      return this.onCredential(req, res, url.pathname + url.search);
    }
    const port = url.port !== "" ? Number(url.port) : 80;
    if (url.protocol !== "http:") {
      this.deny("http", req.method ?? "?", url.hostname, port, "bad-request", "only http:// here");
      res.writeHead(400).end();
      return;
    }
    const check = checkHost(this.config.allow, this.config.hostMap, url.hostname, port);
    if (!check.ok) {
      this.deny("http", req.method ?? "?", url.hostname, port, check.reason, check.detail);
      res.writeHead(403, { "x-airlock-denied": check.reason }).end();
      return;
    }
    const to = await this.resolve(check.host, port, check.mapping);
    if ("reason" in to) {
      this.deny("http", req.method ?? "?", check.host, port, to.reason, to.detail);
      res.writeHead(403, { "x-airlock-denied": to.reason }).end();
      return;
    }
    const headers = forwardHeaders(req.headers, []);
    headers.host = url.host;
    const o = this.track({
      type: "egress",
      time: (/* @__PURE__ */ new Date()).toISOString(),
      kind: "http",
      method: req.method ?? "?",
      host: check.host,
      port,
      allowed: true,
      address: to.address,
      bytesUp: 0,
      bytesDown: 0,
      durationMs: 0
    });
    const up = http.request({
      host: to.address,
      port: to.port,
      method: req.method,
      path: url.pathname + url.search,
      headers,
      agent: this.httpAgent,
      setHost: false
    });
    this.pipeExchange(req, res, up, o);
  }
  pipeExchange(req, res, up, o, record) {
    up.setTimeout(IDLE_MS, () => up.destroy(new Error("idle timeout")));
    req.on("data", (c) => {
      o.event.bytesUp += c.length;
      record?.request.push(c);
    });
    req.pipe(up);
    up.on("response", (upRes) => {
      o.event.status = upRes.statusCode;
      res.writeHead(upRes.statusCode ?? 502, forwardHeaders(upRes.headers, []));
      upRes.on("data", (c) => {
        o.event.bytesDown += c.length;
        record?.response.push(c);
      });
      upRes.pipe(res);
      upRes.on("end", () => {
        record?.onEnd(upRes.statusCode ?? 0);
        this.finish(o);
      });
      upRes.on("error", () => res.destroy());
    });
    up.on("error", (error) => {
      if (o.event.status === void 0) {
        o.event.allowed = false;
        o.event.reason = "connect-failed";
        o.event.detail = this.redact(error.code ?? error.message);
        if (!res.headersSent) res.writeHead(502, { "x-airlock-denied": "connect-failed" });
        res.end();
      } else {
        res.destroy();
      }
      this.finish(o);
    });
    res.on("close", () => {
      up.destroy();
      this.finish(o);
    });
  }
  async onCredential(req, res, pathAndQuery) {
    const m = /^\/([A-Za-z][A-Za-z0-9_]*)(\/[^?#]*)?(\?[^#]*)?$/.exec(pathAndQuery);
    const route = m ? this.config.credentials.find((c) => c.name === m[1]) : void 0;
    if (!m || !route) {
      this.deny(
        "credential",
        req.method ?? "?",
        pathAndQuery.slice(0, 200),
        0,
        "bad-request",
        "no such route"
      );
      res.writeHead(404, { "x-airlock-denied": "no-route" }).end();
      return;
    }
    const upstream = new URL(route.upstream);
    const port = upstream.port !== "" ? Number(upstream.port) : 443;
    const host = upstream.hostname;
    const mapping = this.config.hostMap.find((h) => h.host === host);
    const to = await this.resolve(host, port, mapping);
    if ("reason" in to) {
      this.deny("credential", req.method ?? "?", host, port, to.reason, to.detail);
      res.writeHead(502, { "x-airlock-denied": to.reason }).end();
      return;
    }
    const path = `${upstream.pathname.replace(/\/$/, "")}${m[2] ?? ""}${m[3] ?? ""}` || "/";
    const headerName = secretHeaderName(route);
    const headers = forwardHeaders(req.headers, [headerName]);
    headers.host = upstream.host;
    headers["accept-encoding"] = "identity";
    headers[headerName] = route.header.kind === "bearer" ? `Bearer ${route.secret}` : route.secret;
    const o = this.track({
      type: "egress",
      time: (/* @__PURE__ */ new Date()).toISOString(),
      kind: "credential",
      method: req.method ?? "?",
      host,
      port,
      allowed: true,
      address: to.address,
      route: route.name,
      bytesUp: 0,
      bytesDown: 0,
      durationMs: 0
    });
    const started = Date.now();
    const request3 = new Recorder(this.config.maxRecordBytes);
    const response = new Recorder(this.config.maxRecordBytes);
    const up = https.request({
      host: to.address,
      port: to.port,
      servername: net2.isIP(host) === 0 ? host : void 0,
      method: req.method,
      path,
      headers,
      agent: this.httpsAgent,
      setHost: false,
      ...this.secureContext ? { secureContext: this.secureContext } : {}
    });
    let upHeaders = {};
    up.on("response", (r) => upHeaders = r.headers);
    const redact = (s) => this.redact(s);
    this.pipeExchange(req, res, up, o, {
      request: request3,
      response,
      onEnd: (status) => this.emit({
        type: "transcript",
        time: new Date(started).toISOString(),
        route: route.name,
        method: req.method ?? "?",
        path: redact(path),
        status,
        durationMs: Date.now() - started,
        request: {
          headers: redactHeaders(req.headers, [headerName]),
          body: request3.body(redact)
        },
        response: { headers: redactHeaders(upHeaders, [headerName]), body: response.body(redact) }
      })
    });
  }
};
function secretHeaderName(route) {
  switch (route.header.kind) {
    case "bearer":
      return "authorization";
    case "x-api-key":
      return "x-api-key";
    case "x-goog-api-key":
      return "x-goog-api-key";
    case "header":
      return route.header.name;
  }
}
function forwardHeaders(headers, drop) {
  const out = {};
  const connectionListed = String(headers.connection ?? "").split(",").map((s) => s.trim().toLowerCase());
  for (const [k, v] of Object.entries(headers)) {
    if (v === void 0) continue;
    const key = k.toLowerCase();
    if (HOP_BY_HOP.has(key) || connectionListed.includes(key) || drop.includes(key)) continue;
    if (drop.length > 0 && SECRET_HEADERS.has(key)) continue;
    out[key] = v;
  }
  return out;
}

// src/egress/proxy-main.ts
async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString("utf8");
}
function write(event) {
  process.stdout.write(JSON.stringify(event) + "\n");
}
async function main() {
  const config = JSON.parse(await readStdin());
  const proxy = new EgressProxy(config, (e) => write(e));
  const address = await proxy.listen();
  write({ type: "ready", address: address.address, port: address.port });
  const stop = () => {
    proxy.close().catch(() => void 0).finally(() => process.stdout.write("", () => process.exit(0)));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
main().catch((error) => {
  process.stderr.write(`airlock proxy: ${error instanceof Error ? error.message : String(error)}
`);
  process.exit(1);
});
