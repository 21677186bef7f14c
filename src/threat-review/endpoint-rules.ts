// Outbound endpoints: reverse shells, sockets of its own, URLs, host names and raw IP addresses.
import { cut } from './finding.js'
import type { LineRule, ThreatFinding } from './finding.js'
import type { PatchFile, PatchLine } from './patch.js'

/** A network request of the code's own (for the exfiltration signal). */
export const NETWORK_CALL =
  /\b(fetch|axios(\.\w+)?|superagent(\.\w+)?|https?\.(request|get)|navigator\.sendBeacon|requests\.(get|post|put|patch|request)|urllib\.request\.\w+|urlopen|httpx\.(get|post|put|request)|http\.(Get|Post|PostForm|NewRequest)|dns\.(resolve\w*|lookup))\s*\(|\bnew\s+XMLHttpRequest\b|(^|[\s;|&(])(curl|wget|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\s/

export const ENDPOINT_LINE_RULES: LineRule[] = [
  {
    class: 'outbound-endpoint',
    rule: 'reverse-shell',
    severity: 'high',
    re: /\/dev\/(tcp|udp)\/|\bnc(at)?\b[^\n|;]*\s-[a-z]*e\s|\bsocat\b[^\n]*exec:|\bbash\s+-i\s+>&|pty\.spawn\(/,
    why: 'opens a shell to a remote host (a reverse shell)'
  },
  {
    class: 'outbound-endpoint',
    rule: 'socket',
    severity: 'medium',
    re: /\bdns\.(resolve\w*|lookup)\s*\(|\bsocket\.gethostbyname\s*\(|\bnet\.Lookup(Host|IP|TXT|Addr)\s*\(|(^|[\s;|&])(nslookup|dig|host)\s+[\w$]|\bnet\.(connect|createConnection|Socket|Dial\w*)\b|\btls\.(connect|Dial)\b|\bdgram\.createSocket\b|new\s+WebSocket\s*\(|\bsocket\.(socket|create_connection)\s*\(|\bsocket\.AF_INET\b|\bnet\.Dial(er|TCP|UDP)?\b|\b(nc|ncat|netcat|socat|telnet)\s+(-\w+\s+)*[\w.-]+\s+\d{2,5}\b/,
    why: 'opens a network connection of its own'
  }
]

const BENIGN_HOST =
  /^(localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[?::1\]?|([\w-]+\.)*example(\.(com|org|net))?|([\w-]+\.)*(test|invalid|localhost|local|internal)|json-schema\.org|(www\.)?w3\.org|schemas\.[\w.-]+|xmlns\.[\w.-]+|(www\.)?apache\.org|opensource\.org|spdx\.org|(www\.)?gnu\.org|purl\.org|semver\.org)$/i
const URL_RE =
  /\b(?:https?|wss?|ftp|sftp|ssh):\/\/(?:[^\s/@"'`]+@)?([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\])(?::\d+)?/g

/** A host name alone in a string (no scheme): `"collect.attacker.xyz"`. */
const HOST_LITERAL =
  /["'`]((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:com|net|org|io|xyz|top|ru|cn|tk|ml|ga|cf|gq|sh|dev|app|cc|co|me|info|biz|site|online|link|club|pw|ws|su|to|in|us|uk|de|fr|eu|cloud|workers\.dev|ngrok\.io|onion))(?::\d+)?["'`]/gi
const IP_RE =
  /(?<![\w.@^~=v-])((?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3})(?![\w.])/g

export function endpoints(f: PatchFile, l: PatchLine, text: string, out: ThreatFinding[]): void {
  const hosts = new Set<string>()
  for (const m of text.matchAll(URL_RE)) {
    // A link people follow (an anchor's href) is not a place the code sends anything.
    if (/\bhref\s*=\s*["']?$/.test(text.slice(Math.max(0, (m.index ?? 0) - 12), m.index))) continue
    hosts.add(m[1].toLowerCase())
  }
  for (const m of text.matchAll(IP_RE)) hosts.add(m[1])
  for (const m of text.matchAll(HOST_LITERAL))
    if (!/\.(json|js|ts|py|go|md|txt|yml|yaml|toml|lock|sh)$/i.test(m[1]))
      hosts.add(m[1].toLowerCase())
  for (const h of hosts) {
    // 0.x and 255.x are masks; four single digits read as a version (1.2.3.4) more than a host.
    if (BENIGN_HOST.test(h) || /^(0|255)\./.test(h) || /^\d\.\d\.\d\.\d$/.test(h)) continue
    const ip = /^[\d.]+$|^\[/.test(h)
    out.push({
      path: f.path,
      line: l.line,
      side: 'RIGHT',
      class: 'outbound-endpoint',
      rule: ip ? 'raw-ip' : 'url',
      severity: 'medium',
      why: ip
        ? `a raw IP address (${h}): an endpoint with no name to check`
        : `a new outbound endpoint: ${h}`,
      match: cut(l.text.trim())
    })
  }
}
