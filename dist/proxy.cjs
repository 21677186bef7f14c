"use strict";
var __create = Object.create;
var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __getProtoOf = Object.getPrototypeOf;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __commonJS = (cb, mod) => function __require() {
  try {
    return mod || (0, cb[__getOwnPropNames(cb)[0]])((mod = { exports: {} }).exports, mod), mod.exports;
  } catch (e) {
    throw mod = 0, e;
  }
};
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

// node_modules/ipaddr.js/lib/ipaddr.js
var require_ipaddr = __commonJS({
  "node_modules/ipaddr.js/lib/ipaddr.js"(exports2, module2) {
    (function(root) {
      "use strict";
      const ipv4Part = "(0?\\d+|0x[a-f0-9]+)";
      const ipv4Regexes = {
        fourOctet: new RegExp(`^${ipv4Part}\\.${ipv4Part}\\.${ipv4Part}\\.${ipv4Part}$`, "i"),
        threeOctet: new RegExp(`^${ipv4Part}\\.${ipv4Part}\\.${ipv4Part}$`, "i"),
        twoOctet: new RegExp(`^${ipv4Part}\\.${ipv4Part}$`, "i"),
        longValue: new RegExp(`^${ipv4Part}$`, "i")
      };
      const octalRegex = new RegExp(`^0[0-7]+$`, "i");
      const hexRegex = new RegExp(`^0x[a-f0-9]+$`, "i");
      const zoneIndex = "%[0-9a-z]{1,}";
      const ipv6Part = "(?:[0-9a-f]+::?)+";
      const ipv6Regexes = {
        zoneIndex: new RegExp(zoneIndex, "i"),
        "native": new RegExp(`^(::)?(${ipv6Part})?([0-9a-f]+)?(::)?(${zoneIndex})?$`, "i"),
        deprecatedTransitional: new RegExp(`^(?:::)(${ipv4Part}\\.${ipv4Part}\\.${ipv4Part}\\.${ipv4Part}(${zoneIndex})?)$`, "i"),
        transitional: new RegExp(`^((?:${ipv6Part})|(?:::)(?:${ipv6Part})?)${ipv4Part}\\.${ipv4Part}\\.${ipv4Part}\\.${ipv4Part}(${zoneIndex})?$`, "i")
      };
      function expandIPv6(string, parts) {
        if (string.indexOf("::") !== string.lastIndexOf("::")) {
          return null;
        }
        let colonCount = 0;
        let lastColon = -1;
        let zoneId = (string.match(ipv6Regexes.zoneIndex) || [])[0];
        let replacement, replacementCount;
        if (zoneId) {
          zoneId = zoneId.substring(1);
          string = string.replace(/%.+$/, "");
        }
        while ((lastColon = string.indexOf(":", lastColon + 1)) >= 0) {
          colonCount++;
        }
        if (string.substr(0, 2) === "::") {
          colonCount--;
        }
        if (string.substr(-2, 2) === "::") {
          colonCount--;
        }
        if (colonCount >= parts) {
          return null;
        }
        replacementCount = parts - colonCount;
        replacement = ":";
        while (replacementCount--) {
          replacement += "0:";
        }
        string = string.replace("::", replacement);
        if (string[0] === ":") {
          string = string.slice(1);
        }
        if (string[string.length - 1] === ":") {
          string = string.slice(0, -1);
        }
        parts = (function() {
          const ref = string.split(":");
          const results = [];
          for (let i = 0; i < ref.length; i++) {
            results.push(ref[i].length > 4 ? NaN : parseInt(ref[i], 16));
          }
          return results;
        })();
        return {
          parts,
          zoneId
        };
      }
      function matchCIDR(first, second, partSize, cidrBits) {
        if (first.length !== second.length) {
          throw new Error("ipaddr: cannot match CIDR for objects with different lengths");
        }
        let part = 0;
        let shift;
        while (cidrBits > 0) {
          shift = partSize - cidrBits;
          if (shift < 0) {
            shift = 0;
          }
          if (first[part] >> shift !== second[part] >> shift) {
            return false;
          }
          cidrBits -= partSize;
          part += 1;
        }
        return true;
      }
      function parseIntAuto(string) {
        if (hexRegex.test(string)) {
          return parseInt(string, 16);
        }
        if (string[0] === "0" && !isNaN(parseInt(string[1], 10))) {
          if (octalRegex.test(string)) {
            return parseInt(string, 8);
          }
          throw new Error(`ipaddr: cannot parse ${string} as octal`);
        }
        return parseInt(string, 10);
      }
      function padPart(part, length) {
        while (part.length < length) {
          part = `0${part}`;
        }
        return part;
      }
      const ipaddr2 = {};
      ipaddr2.IPv4 = (function() {
        function IPv4(octets) {
          if (octets.length !== 4) {
            throw new Error("ipaddr: ipv4 octet count should be 4");
          }
          let i, octet;
          for (i = 0; i < octets.length; i++) {
            octet = octets[i];
            if (!(0 <= octet && octet <= 255)) {
              throw new Error("ipaddr: ipv4 octet should fit in 8 bits");
            }
          }
          this.octets = octets;
        }
        IPv4.prototype.SpecialRanges = {
          unspecified: [[new IPv4([0, 0, 0, 0]), 8]],
          broadcast: [[new IPv4([255, 255, 255, 255]), 32]],
          // RFC3171
          multicast: [[new IPv4([224, 0, 0, 0]), 4]],
          // RFC3927
          linkLocal: [[new IPv4([169, 254, 0, 0]), 16]],
          // RFC5735
          loopback: [[new IPv4([127, 0, 0, 0]), 8]],
          // RFC6598
          carrierGradeNat: [[new IPv4([100, 64, 0, 0]), 10]],
          // RFC1918
          "private": [
            [new IPv4([10, 0, 0, 0]), 8],
            [new IPv4([172, 16, 0, 0]), 12],
            [new IPv4([192, 168, 0, 0]), 16]
          ],
          // Reserved and testing-only ranges; RFCs 5735, 5737, 2544, 1700
          reserved: [
            [new IPv4([192, 0, 0, 0]), 24],
            [new IPv4([192, 0, 2, 0]), 24],
            [new IPv4([192, 88, 99, 0]), 24],
            [new IPv4([198, 18, 0, 0]), 15],
            [new IPv4([198, 51, 100, 0]), 24],
            [new IPv4([203, 0, 113, 0]), 24],
            [new IPv4([240, 0, 0, 0]), 4]
          ],
          // RFC7534, RFC7535
          as112: [
            [new IPv4([192, 175, 48, 0]), 24],
            [new IPv4([192, 31, 196, 0]), 24]
          ],
          // RFC7450
          amt: [
            [new IPv4([192, 52, 193, 0]), 24]
          ]
        };
        IPv4.prototype.kind = function() {
          return "ipv4";
        };
        IPv4.prototype.match = function(other, cidrRange) {
          let ref;
          if (cidrRange === void 0) {
            ref = other;
            other = ref[0];
            cidrRange = ref[1];
          }
          if (other.kind() !== "ipv4") {
            throw new Error("ipaddr: cannot match ipv4 address with non-ipv4 one");
          }
          return matchCIDR(this.octets, other.octets, 8, cidrRange);
        };
        IPv4.prototype.prefixLengthFromSubnetMask = function() {
          let cidr = 0;
          let stop = false;
          const zerotable = {
            0: 8,
            128: 7,
            192: 6,
            224: 5,
            240: 4,
            248: 3,
            252: 2,
            254: 1,
            255: 0
          };
          let i, octet, zeros;
          for (i = 3; i >= 0; i -= 1) {
            octet = this.octets[i];
            if (octet in zerotable) {
              zeros = zerotable[octet];
              if (stop && zeros !== 0) {
                return null;
              }
              if (zeros !== 8) {
                stop = true;
              }
              cidr += zeros;
            } else {
              return null;
            }
          }
          return 32 - cidr;
        };
        IPv4.prototype.range = function() {
          return ipaddr2.subnetMatch(this, this.SpecialRanges);
        };
        IPv4.prototype.toByteArray = function() {
          return this.octets.slice(0);
        };
        IPv4.prototype.toIPv4MappedAddress = function() {
          return ipaddr2.IPv6.parse(`::ffff:${this.toString()}`);
        };
        IPv4.prototype.toNormalizedString = function() {
          return this.toString();
        };
        IPv4.prototype.toString = function() {
          return this.octets.join(".");
        };
        return IPv4;
      })();
      ipaddr2.IPv4.broadcastAddressFromCIDR = function(string) {
        try {
          const cidr = this.parseCIDR(string);
          const ipInterfaceOctets = cidr[0].toByteArray();
          const subnetMaskOctets = this.subnetMaskFromPrefixLength(cidr[1]).toByteArray();
          const octets = [];
          let i = 0;
          while (i < 4) {
            octets.push(parseInt(ipInterfaceOctets[i], 10) | parseInt(subnetMaskOctets[i], 10) ^ 255);
            i++;
          }
          return new this(octets);
        } catch (e) {
          throw new Error("ipaddr: the address does not have IPv4 CIDR format", { cause: e });
        }
      };
      ipaddr2.IPv4.isIPv4 = function(string) {
        return this.parser(string) !== null;
      };
      ipaddr2.IPv4.isValid = function(string) {
        try {
          new this(this.parser(string));
          return true;
        } catch {
          return false;
        }
      };
      ipaddr2.IPv4.isValidCIDR = function(string) {
        try {
          this.parseCIDR(string);
          return true;
        } catch {
          return false;
        }
      };
      ipaddr2.IPv4.isValidFourPartDecimal = function(string) {
        if (ipaddr2.IPv4.isValid(string) && string.match(/^(0|[1-9]\d*)(\.(0|[1-9]\d*)){3}$/)) {
          return true;
        } else {
          return false;
        }
      };
      ipaddr2.IPv4.isValidCIDRFourPartDecimal = function(string) {
        const match = string.match(/^(.+)\/(\d+)$/);
        if (!ipaddr2.IPv4.isValidCIDR(string) || !match) {
          return false;
        }
        return ipaddr2.IPv4.isValidFourPartDecimal(match[1]);
      };
      ipaddr2.IPv4.networkAddressFromCIDR = function(string) {
        let cidr, i, ipInterfaceOctets, octets, subnetMaskOctets;
        try {
          cidr = this.parseCIDR(string);
          ipInterfaceOctets = cidr[0].toByteArray();
          subnetMaskOctets = this.subnetMaskFromPrefixLength(cidr[1]).toByteArray();
          octets = [];
          i = 0;
          while (i < 4) {
            octets.push(parseInt(ipInterfaceOctets[i], 10) & parseInt(subnetMaskOctets[i], 10));
            i++;
          }
          return new this(octets);
        } catch (e) {
          throw new Error("ipaddr: the address does not have IPv4 CIDR format", { cause: e });
        }
      };
      ipaddr2.IPv4.parse = function(string) {
        const parts = this.parser(string);
        if (parts === null) {
          throw new Error("ipaddr: string is not formatted like an IPv4 Address");
        }
        return new this(parts);
      };
      ipaddr2.IPv4.parseCIDR = function(string) {
        let match;
        if (match = string.match(/^(.+)\/(\d+)$/)) {
          const maskLength = parseInt(match[2]);
          if (maskLength >= 0 && maskLength <= 32) {
            const parsed = [this.parse(match[1]), maskLength];
            Object.defineProperty(parsed, "toString", {
              value: function() {
                return this.join("/");
              }
            });
            return parsed;
          }
        }
        throw new Error("ipaddr: string is not formatted like an IPv4 CIDR range");
      };
      ipaddr2.IPv4.parser = function(string) {
        let match, part, value;
        if (match = string.match(ipv4Regexes.fourOctet)) {
          return (function() {
            const ref = match.slice(1, 6);
            const results = [];
            for (let i = 0; i < ref.length; i++) {
              part = ref[i];
              results.push(parseIntAuto(part));
            }
            return results;
          })();
        } else if (match = string.match(ipv4Regexes.longValue)) {
          value = parseIntAuto(match[1]);
          if (value > 4294967295 || value < 0) {
            throw new Error("ipaddr: address outside defined range");
          }
          return (function() {
            const results = [];
            let shift;
            for (shift = 0; shift <= 24; shift += 8) {
              results.push(value >> shift & 255);
            }
            return results;
          })().reverse();
        } else if (match = string.match(ipv4Regexes.twoOctet)) {
          return (function() {
            const ref = match.slice(1, 4);
            const results = [];
            value = parseIntAuto(ref[1]);
            if (value > 16777215 || value < 0) {
              throw new Error("ipaddr: address outside defined range");
            }
            results.push(parseIntAuto(ref[0]));
            results.push(value >> 16 & 255);
            results.push(value >> 8 & 255);
            results.push(value & 255);
            return results;
          })();
        } else if (match = string.match(ipv4Regexes.threeOctet)) {
          return (function() {
            const ref = match.slice(1, 5);
            const results = [];
            value = parseIntAuto(ref[2]);
            if (value > 65535 || value < 0) {
              throw new Error("ipaddr: address outside defined range");
            }
            results.push(parseIntAuto(ref[0]));
            results.push(parseIntAuto(ref[1]));
            results.push(value >> 8 & 255);
            results.push(value & 255);
            return results;
          })();
        } else {
          return null;
        }
      };
      ipaddr2.IPv4.subnetMaskFromPrefixLength = function(prefix) {
        prefix = parseInt(prefix);
        if (Number.isNaN(prefix) || prefix < 0 || prefix > 32) {
          throw new Error("ipaddr: invalid IPv4 prefix length");
        }
        const octets = [0, 0, 0, 0];
        let j = 0;
        const filledOctetCount = Math.floor(prefix / 8);
        while (j < filledOctetCount) {
          octets[j] = 255;
          j++;
        }
        if (filledOctetCount < 4) {
          octets[filledOctetCount] = Math.pow(2, prefix % 8) - 1 << 8 - prefix % 8;
        }
        return new this(octets);
      };
      ipaddr2.IPv6 = (function() {
        function IPv6(parts, zoneId) {
          let i, part;
          if (parts.length === 16) {
            this.parts = [];
            for (i = 0; i <= 14; i += 2) {
              this.parts.push(parts[i] << 8 | parts[i + 1]);
            }
          } else if (parts.length === 8) {
            this.parts = parts;
          } else {
            throw new Error("ipaddr: ipv6 part count should be 8 or 16");
          }
          for (i = 0; i < this.parts.length; i++) {
            part = this.parts[i];
            if (!(0 <= part && part <= 65535)) {
              throw new Error("ipaddr: ipv6 part should fit in 16 bits");
            }
          }
          if (zoneId) {
            this.zoneId = zoneId;
          }
        }
        IPv6.prototype.SpecialRanges = {
          // RFC4291, here and after
          unspecified: [new IPv6([0, 0, 0, 0, 0, 0, 0, 0]), 128],
          linkLocal: [new IPv6([65152, 0, 0, 0, 0, 0, 0, 0]), 10],
          multicast: [new IPv6([65280, 0, 0, 0, 0, 0, 0, 0]), 8],
          loopback: [new IPv6([0, 0, 0, 0, 0, 0, 0, 1]), 128],
          uniqueLocal: [new IPv6([64512, 0, 0, 0, 0, 0, 0, 0]), 7],
          ipv4Mapped: [new IPv6([0, 0, 0, 0, 0, 65535, 0, 0]), 96],
          // RFC3879
          deprecatedSiteLocal: [new IPv6([65216, 0, 0, 0, 0, 0, 0, 0]), 10],
          // RFC6666
          discard: [new IPv6([256, 0, 0, 0, 0, 0, 0, 0]), 64],
          // RFC6145
          rfc6145: [new IPv6([0, 0, 0, 0, 65535, 0, 0, 0]), 96],
          rfc6052: [
            // RFC6052
            [new IPv6([100, 65435, 0, 0, 0, 0, 0, 0]), 96],
            // RFC8215
            [new IPv6([100, 65435, 1, 0, 0, 0, 0, 0]), 48]
          ],
          // RFC3056
          "6to4": [new IPv6([8194, 0, 0, 0, 0, 0, 0, 0]), 16],
          // RFC6052, RFC6146
          teredo: [new IPv6([8193, 0, 0, 0, 0, 0, 0, 0]), 32],
          // RFC5180
          benchmarking: [new IPv6([8193, 2, 0, 0, 0, 0, 0, 0]), 48],
          // RFC7450
          amt: [new IPv6([8193, 3, 0, 0, 0, 0, 0, 0]), 32],
          as112v6: [
            // RFC7535
            [new IPv6([8193, 4, 274, 0, 0, 0, 0, 0]), 48],
            // RFC7534
            [new IPv6([9760, 79, 32768, 0, 0, 0, 0, 0]), 48]
          ],
          // RFC4843
          deprecatedOrchid: [new IPv6([8193, 16, 0, 0, 0, 0, 0, 0]), 28],
          // RFC7343
          orchid2: [new IPv6([8193, 32, 0, 0, 0, 0, 0, 0]), 28],
          // RFC9374
          droneRemoteIdProtocolEntityTags: [new IPv6([8193, 48, 0, 0, 0, 0, 0, 0]), 28],
          // RFC9602
          segmentRouting: [new IPv6([24320, 0, 0, 0, 0, 0, 0, 0]), 16],
          reserved: [
            // RFC3849
            [new IPv6([8193, 0, 0, 0, 0, 0, 0, 0]), 23],
            // RFC2928
            [new IPv6([8193, 3512, 0, 0, 0, 0, 0, 0]), 32],
            // RFC9637
            [new IPv6([16383, 0, 0, 0, 0, 0, 0, 0]), 20]
          ]
        };
        IPv6.prototype.isIPv4MappedAddress = function() {
          return this.range() === "ipv4Mapped";
        };
        IPv6.prototype.kind = function() {
          return "ipv6";
        };
        IPv6.prototype.match = function(other, cidrRange) {
          let ref;
          if (cidrRange === void 0) {
            ref = other;
            other = ref[0];
            cidrRange = ref[1];
          }
          if (other.kind() !== "ipv6") {
            throw new Error("ipaddr: cannot match ipv6 address with non-ipv6 one");
          }
          return matchCIDR(this.parts, other.parts, 16, cidrRange);
        };
        IPv6.prototype.prefixLengthFromSubnetMask = function() {
          let cidr = 0;
          let stop = false;
          const zerotable = {
            0: 16,
            32768: 15,
            49152: 14,
            57344: 13,
            61440: 12,
            63488: 11,
            64512: 10,
            65024: 9,
            65280: 8,
            65408: 7,
            65472: 6,
            65504: 5,
            65520: 4,
            65528: 3,
            65532: 2,
            65534: 1,
            65535: 0
          };
          let part, zeros;
          for (let i = 7; i >= 0; i -= 1) {
            part = this.parts[i];
            if (part in zerotable) {
              zeros = zerotable[part];
              if (stop && zeros !== 0) {
                return null;
              }
              if (zeros !== 16) {
                stop = true;
              }
              cidr += zeros;
            } else {
              return null;
            }
          }
          return 128 - cidr;
        };
        IPv6.prototype.range = function() {
          return ipaddr2.subnetMatch(this, this.SpecialRanges);
        };
        IPv6.prototype.toByteArray = function() {
          let part;
          const bytes = [];
          const ref = this.parts;
          for (let i = 0; i < ref.length; i++) {
            part = ref[i];
            bytes.push(part >> 8);
            bytes.push(part & 255);
          }
          return bytes;
        };
        IPv6.prototype.toFixedLengthString = function() {
          const addr = (function() {
            const results = [];
            for (let i = 0; i < this.parts.length; i++) {
              results.push(padPart(this.parts[i].toString(16), 4));
            }
            return results;
          }).call(this).join(":");
          let suffix = "";
          if (this.zoneId) {
            suffix = `%${this.zoneId}`;
          }
          return addr + suffix;
        };
        IPv6.prototype.toIPv4Address = function() {
          if (!this.isIPv4MappedAddress()) {
            throw new Error("ipaddr: trying to convert a generic ipv6 address to ipv4");
          }
          const ref = this.parts.slice(-2);
          const high = ref[0];
          const low = ref[1];
          return new ipaddr2.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
        };
        IPv6.prototype.toNormalizedString = function() {
          const addr = (function() {
            const results = [];
            for (let i = 0; i < this.parts.length; i++) {
              results.push(this.parts[i].toString(16));
            }
            return results;
          }).call(this).join(":");
          let suffix = "";
          if (this.zoneId) {
            suffix = `%${this.zoneId}`;
          }
          return addr + suffix;
        };
        IPv6.prototype.toRFC5952String = function() {
          const regex = /((^|:)(0(:|$)){2,})/g;
          let suffix = "";
          if (this.zoneId) {
            suffix = `%${this.zoneId}`;
          }
          const normalized = this.toNormalizedString();
          const string = normalized.slice(0, normalized.length - suffix.length);
          let bestMatchIndex = 0;
          let bestMatchLength = -1;
          let bestMatchGroups = -1;
          let match;
          while (match = regex.exec(string)) {
            const groups = (match[0].match(/0/g) || []).length;
            if (groups > bestMatchGroups) {
              bestMatchGroups = groups;
              bestMatchIndex = match.index;
              bestMatchLength = match[0].length;
            }
          }
          if (bestMatchLength < 0) {
            return string + suffix;
          }
          return `${string.substring(0, bestMatchIndex)}::${string.substring(bestMatchIndex + bestMatchLength)}${suffix}`;
        };
        IPv6.prototype.toString = function() {
          return this.toRFC5952String();
        };
        return IPv6;
      })();
      ipaddr2.IPv6.broadcastAddressFromCIDR = function(string) {
        try {
          const cidr = this.parseCIDR(string);
          const ipInterfaceOctets = cidr[0].toByteArray();
          const subnetMaskOctets = this.subnetMaskFromPrefixLength(cidr[1]).toByteArray();
          const octets = [];
          let i = 0;
          while (i < 16) {
            octets.push(parseInt(ipInterfaceOctets[i], 10) | parseInt(subnetMaskOctets[i], 10) ^ 255);
            i++;
          }
          return new this(octets);
        } catch (e) {
          throw new Error("ipaddr: the address does not have IPv6 CIDR format", { cause: e });
        }
      };
      ipaddr2.IPv6.isIPv6 = function(string) {
        return this.parser(string) !== null;
      };
      ipaddr2.IPv6.isValid = function(string) {
        if (typeof string === "string" && string.indexOf(":") === -1) {
          return false;
        }
        try {
          const addr = this.parser(string);
          new this(addr.parts, addr.zoneId);
          return true;
        } catch {
          return false;
        }
      };
      ipaddr2.IPv6.isValidCIDR = function(string) {
        if (typeof string === "string" && string.indexOf(":") === -1) {
          return false;
        }
        try {
          this.parseCIDR(string);
          return true;
        } catch {
          return false;
        }
      };
      ipaddr2.IPv6.networkAddressFromCIDR = function(string) {
        let cidr, i, ipInterfaceOctets, octets, subnetMaskOctets;
        try {
          cidr = this.parseCIDR(string);
          ipInterfaceOctets = cidr[0].toByteArray();
          subnetMaskOctets = this.subnetMaskFromPrefixLength(cidr[1]).toByteArray();
          octets = [];
          i = 0;
          while (i < 16) {
            octets.push(parseInt(ipInterfaceOctets[i], 10) & parseInt(subnetMaskOctets[i], 10));
            i++;
          }
          return new this(octets);
        } catch (e) {
          throw new Error("ipaddr: the address does not have IPv6 CIDR format", { cause: e });
        }
      };
      ipaddr2.IPv6.parse = function(string) {
        const addr = this.parser(string);
        if (addr === null) {
          throw new Error("ipaddr: string is not formatted like an IPv6 Address");
        }
        return new this(addr.parts, addr.zoneId);
      };
      ipaddr2.IPv6.parseCIDR = function(string) {
        let maskLength, match, parsed;
        if (match = string.match(/^(.+)\/(\d+)$/)) {
          maskLength = parseInt(match[2]);
          if (maskLength >= 0 && maskLength <= 128) {
            parsed = [this.parse(match[1]), maskLength];
            Object.defineProperty(parsed, "toString", {
              value: function() {
                return this.join("/");
              }
            });
            return parsed;
          }
        }
        throw new Error("ipaddr: string is not formatted like an IPv6 CIDR range");
      };
      ipaddr2.IPv6.parser = function(string) {
        let addr, i, match, octet, octets, zoneId;
        if (match = string.match(ipv6Regexes.deprecatedTransitional)) {
          return this.parser(`::ffff:${match[1]}`);
        }
        if (ipv6Regexes.native.test(string)) {
          return expandIPv6(string, 8);
        }
        if (match = string.match(ipv6Regexes.transitional)) {
          zoneId = match[6] || "";
          addr = match[1];
          if (!match[1].endsWith("::")) {
            addr = addr.slice(0, -1);
          }
          addr = expandIPv6(addr + zoneId, 6);
          if (addr && addr.parts) {
            octets = [
              parseInt(match[2]),
              parseInt(match[3]),
              parseInt(match[4]),
              parseInt(match[5])
            ];
            for (i = 0; i < octets.length; i++) {
              octet = octets[i];
              if (!(0 <= octet && octet <= 255)) {
                return null;
              }
            }
            addr.parts.push(octets[0] << 8 | octets[1]);
            addr.parts.push(octets[2] << 8 | octets[3]);
            return {
              parts: addr.parts,
              zoneId: addr.zoneId
            };
          }
        }
        return null;
      };
      ipaddr2.IPv6.subnetMaskFromPrefixLength = function(prefix) {
        prefix = parseInt(prefix);
        if (Number.isNaN(prefix) || prefix < 0 || prefix > 128) {
          throw new Error("ipaddr: invalid IPv6 prefix length");
        }
        const octets = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let j = 0;
        const filledOctetCount = Math.floor(prefix / 8);
        while (j < filledOctetCount) {
          octets[j] = 255;
          j++;
        }
        if (filledOctetCount < 16) {
          octets[filledOctetCount] = Math.pow(2, prefix % 8) - 1 << 8 - prefix % 8;
        }
        return new this(octets);
      };
      ipaddr2.fromByteArray = function(bytes) {
        const length = bytes.length;
        if (length === 4) {
          return new ipaddr2.IPv4(bytes);
        } else if (length === 16) {
          return new ipaddr2.IPv6(bytes);
        } else {
          throw new Error("ipaddr: the binary input is neither an IPv6 nor IPv4 address");
        }
      };
      ipaddr2.isValid = function(string) {
        return ipaddr2.IPv6.isValid(string) || ipaddr2.IPv4.isValid(string);
      };
      ipaddr2.isValidCIDR = function(string) {
        return ipaddr2.IPv6.isValidCIDR(string) || ipaddr2.IPv4.isValidCIDR(string);
      };
      ipaddr2.parse = function(string) {
        if (ipaddr2.IPv6.isValid(string)) {
          return ipaddr2.IPv6.parse(string);
        } else if (ipaddr2.IPv4.isValid(string)) {
          return ipaddr2.IPv4.parse(string);
        } else {
          throw new Error("ipaddr: the address has neither IPv6 nor IPv4 format");
        }
      };
      ipaddr2.parseCIDR = function(string) {
        try {
          return ipaddr2.IPv6.parseCIDR(string);
        } catch {
          try {
            return ipaddr2.IPv4.parseCIDR(string);
          } catch (e) {
            throw new Error("ipaddr: the address has neither IPv6 nor IPv4 CIDR format", { cause: e });
          }
        }
      };
      ipaddr2.process = function(string) {
        const addr = this.parse(string);
        if (addr.kind() === "ipv6" && addr.isIPv4MappedAddress()) {
          return addr.toIPv4Address();
        } else {
          return addr;
        }
      };
      ipaddr2.subnetMatch = function(address, rangeList, defaultName) {
        let i, rangeName, rangeSubnets, subnet;
        if (defaultName === void 0 || defaultName === null) {
          defaultName = "unicast";
        }
        for (rangeName in rangeList) {
          if (Object.prototype.hasOwnProperty.call(rangeList, rangeName)) {
            rangeSubnets = rangeList[rangeName];
            if (rangeSubnets[0] && !(rangeSubnets[0] instanceof Array)) {
              rangeSubnets = [rangeSubnets];
            }
            for (i = 0; i < rangeSubnets.length; i++) {
              subnet = rangeSubnets[i];
              if (address.kind() === subnet[0].kind() && address.match.apply(address, subnet)) {
                return rangeName;
              }
            }
          }
        }
        return defaultName;
      };
      if (typeof module2 !== "undefined" && module2.exports) {
        module2.exports = ipaddr2;
      } else {
        root.ipaddr = ipaddr2;
      }
    })(exports2);
  }
});

// src/egress/proxy.ts
var http = __toESM(require("node:http"), 1);
var https2 = __toESM(require("node:https"), 1);
var tls = __toESM(require("node:tls"), 1);

// src/prices.ts
var PRICES = {
  "claude-opus-4-5": { input: 5, output: 25 },
  "claude-opus-4-1": { input: 15, output: 75 },
  "claude-opus-4": { input: 15, output: 75 },
  "claude-sonnet-4": { input: 3, output: 15 },
  "claude-3-7-sonnet": { input: 3, output: 15 },
  "claude-haiku-4-5": { input: 1, output: 5 },
  "claude-3-5-haiku": { input: 0.8, output: 4 },
  "gpt-5-mini": { input: 0.25, output: 2 },
  "gpt-5-nano": { input: 0.05, output: 0.4 },
  "gpt-5": { input: 1.25, output: 10 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6 },
  "gpt-4.1": { input: 2, output: 8 },
  "gemini-2.5-pro": { input: 1.25, output: 10 },
  "gemini-2.5-flash-lite": { input: 0.1, output: 0.4 },
  "gemini-2.5-flash": { input: 0.3, output: 2.5 }
};
function priceOf(model) {
  const name = model.toLowerCase().replace(/^models\//, "");
  let best;
  for (const key of Object.keys(PRICES))
    if (name.startsWith(key) && (best === void 0 || key.length > best.length)) best = key;
  return best === void 0 ? void 0 : { entry: best, price: PRICES[best] };
}
function dearestPrice() {
  const all = Object.values(PRICES);
  return {
    input: Math.max(...all.map((p) => p.input)),
    output: Math.max(...all.map((p) => p.output))
  };
}
function exchangeCost(model, input, output) {
  const price = (model !== null ? priceOf(model)?.price : void 0) ?? dearestPrice();
  const tokens = (n) => Number.isFinite(n) && n > 0 ? n : 0;
  return (tokens(input) * price.input + tokens(output) * price.output) / 1e6;
}

// src/egress/budget.ts
function formatUsd(usd) {
  return `$${Number(usd.toFixed(6))}`;
}
var Budget = class {
  constructor(limits) {
    this.limits = limits;
  }
  limits;
  state = { requests: 0, tokens: 0, costUsd: 0, hit: null, denied: 0 };
  /** Undefined when the request may go; else the reason it may not (and it is counted as denied). */
  admit() {
    const { maxRequests, maxTokens, maxCostUsd } = this.limits;
    let reason;
    if (maxRequests !== void 0 && this.state.requests >= maxRequests) {
      this.state.hit ??= "max-model-requests";
      reason = `max-model-requests (${maxRequests}) reached: ${this.state.requests} model request(s) sent`;
    } else if (maxTokens !== void 0 && this.state.tokens >= maxTokens) {
      this.state.hit ??= "max-model-tokens";
      reason = `max-model-tokens (${maxTokens}) reached: ${this.state.tokens} token(s) used`;
    } else if (maxCostUsd !== void 0 && this.state.costUsd >= maxCostUsd) {
      this.state.hit ??= "max-cost-usd";
      reason = `max-cost-usd (${maxCostUsd}) reached: ${formatUsd(this.state.costUsd)} spent at list prices`;
    }
    if (reason !== void 0) {
      this.state.denied++;
      return reason;
    }
    this.state.requests++;
    return void 0;
  }
  addTokens(n) {
    if (Number.isFinite(n) && n > 0) this.state.tokens += n;
  }
  /** One finished exchange: its tokens, and their cost at the model's rates. */
  addExchange(model, input, output) {
    this.addTokens(input);
    this.addTokens(output);
    this.state.costUsd += exchangeCost(model, input, output);
  }
};

// src/redact-matcher.ts
var DENSE_DEPTH = 3;
var FormMatcher = class {
  /** Transitions of every node but the root, keyed node * 0x10000 + character code. */
  edges = /* @__PURE__ */ new Map();
  /** The root's transitions by character code (0: none). */
  root = new Int32Array(65536);
  fail = [0];
  /** The longest form ending at this node (its own, or one of its suffixes'); 0: none. */
  out = [0];
  /**
   * For the shallow nodes, where text that is no secret spends its time: the next node on each
   * ASCII character with the failure links already followed (one array read instead of a walk).
   */
  dense = new Int32Array(0);
  /** Where a node's row starts in `dense` (-1: a deeper node, no row). */
  row = [-1];
  longest;
  /** Positions of the characters taken into the current match (reused by every scan). */
  ring;
  constructor(forms) {
    let longest = 0;
    const children = [[]];
    const codes = [0];
    for (const form of forms) {
      let node = 0;
      for (let k = 0; k < form.length; k++) {
        const c = form.charCodeAt(k);
        let to = this.step(node, c);
        if (to === 0) {
          to = this.fail.length;
          this.fail.push(0);
          this.out.push(0);
          this.row.push(-1);
          children.push([]);
          codes.push(c);
          children[node].push(to);
          if (node === 0) this.root[c] = to;
          else this.edges.set(node * 65536 + c, to);
        }
        node = to;
      }
      this.out[node] = form.length;
      longest = Math.max(longest, form.length);
    }
    this.longest = longest;
    this.ring = new Int32Array(Math.max(1, longest));
    const queue = [...children[0]];
    const depth = new Map(queue.map((n) => [n, 1]));
    const rows = [];
    for (let q = 0; q < queue.length; q++) {
      const node = queue[q];
      if (this.out[node] === 0) this.out[node] = this.out[this.fail[node]];
      const d = depth.get(node) ?? 0;
      if (d <= DENSE_DEPTH) {
        const table = new Int32Array(128);
        const f = this.fail[node];
        for (let c = 0; c < 128; c++) {
          const to = this.step(node, c);
          table[c] = to !== 0 ? to : f === 0 ? this.root[c] : rows[this.row[f] / 128][c];
        }
        this.row[node] = rows.length * 128;
        rows.push(table);
      }
      for (const child of children[node]) depth.set(child, d + 1);
      for (const child of children[node]) {
        const c = codes[child];
        let f = this.fail[node];
        while (f !== 0 && this.step(f, c) === 0) f = this.fail[f];
        const to = this.step(f, c);
        this.fail[child] = to !== child ? to : 0;
        queue.push(child);
      }
    }
    this.dense = new Int32Array(rows.length * 128);
    rows.forEach((r, i) => this.dense.set(r, i * 128));
  }
  /** The node after `node` on character `c` (0: no transition). */
  step(node, c) {
    return node === 0 ? this.root[c] : this.edges.get(node * 65536 + c) ?? 0;
  }
  /** Spans of the text that are a form (with its line breaks), leftmost-longest, disjoint. */
  spans(text) {
    if (this.longest === 0) return [];
    const ring = this.ring;
    let taken = 0;
    let state = 0;
    let gap = 0;
    const found = [];
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (state === 0) {
        state = this.root[c];
        if (state === 0) continue;
        gap = 0;
      } else if (c < 128 && c !== 10 && c !== 13 && this.row[state] >= 0) {
        state = this.dense[this.row[state] + c];
        gap = 0;
        if (state === 0) continue;
      } else {
        let to = this.step(state, c);
        if (to === 0) {
          if (c === 13 && gap === 0) {
            gap = 1;
            continue;
          }
          if (c === 10 && gap < 2) {
            gap = 2;
            continue;
          }
          while (state !== 0 && to === 0) {
            state = this.fail[state];
            to = this.step(state, c);
          }
        }
        gap = 0;
        state = to;
        if (state === 0) continue;
      }
      ring[taken % this.longest] = i;
      taken++;
      const length = this.out[state];
      if (length > 0) found.push({ start: ring[(taken - length) % this.longest], end: i + 1 });
    }
    found.sort((a, b) => a.start - b.start || b.end - a.end);
    const spans = [];
    let reached = 0;
    for (const f of found) {
      if (f.start < reached) continue;
      spans.push(f);
      reached = f.end;
    }
    return spans;
  }
};

// src/redact-forms.ts
var MIN_FRAGMENT = 8;
function base64Fragments(secret) {
  const out = [];
  for (let k = 0; k < 3; k++) {
    const encoded = Buffer.concat([Buffer.alloc(k), secret]).toString("base64");
    const start = Math.ceil(8 * k / 6);
    const end = Math.floor(8 * (k + secret.length) / 6);
    const fragment = encoded.slice(start, end);
    if (fragment.length >= MIN_FRAGMENT) {
      out.push(fragment);
      const urlSafe = fragment.replace(/\+/g, "-").replace(/\//g, "_");
      if (urlSafe !== fragment) out.push(urlSafe);
    }
  }
  return out;
}
var HTML_SENSITIVE = /^[<>&'"`+]$/;
function jsonEscaped(value, escaped, upper, slash) {
  let out = "";
  for (const c of value) {
    if (escaped(c)) {
      for (let k = 0; k < c.length; k++) {
        const hex = c.charCodeAt(k).toString(16).padStart(4, "0");
        out += `\\u${upper ? hex.toUpperCase() : hex}`;
      }
    } else out += slash && c === "/" ? "\\/" : JSON.stringify(c).slice(1, -1);
  }
  return out;
}
function jsonForms(value) {
  const none = () => false;
  const html = (c) => HTML_SENSITIVE.test(c);
  const strict = (c) => !/^[A-Za-z0-9]$/.test(c);
  return [
    jsonEscaped(value, none, true, true),
    ...[true, false].flatMap((upper) => [
      jsonEscaped(value, html, upper, false),
      jsonEscaped(value, html, upper, true),
      jsonEscaped(value, strict, upper, false)
    ])
  ];
}
var lowerPercent = (text) => text.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
function variants(value, bytes) {
  const raw = Buffer.from(value, "utf8");
  const forms = /* @__PURE__ */ new Set([
    value,
    encodeURIComponent(value),
    encodeURIComponent(value).replace(/%20/g, "+"),
    encodeURI(value),
    lowerPercent(encodeURIComponent(value)),
    lowerPercent(encodeURIComponent(value).replace(/%20/g, "+")),
    lowerPercent(encodeURI(value)),
    JSON.stringify(value).slice(1, -1),
    ...jsonForms(value),
    raw.toString("hex"),
    raw.toString("hex").toUpperCase(),
    ...base64Fragments(raw)
  ]);
  return [...forms].map((f) => bytes ? Buffer.from(f, "utf8").toString("latin1") : f);
}

// src/redact.ts
var MASK = "***";
var MIN_SECRET_LENGTH = 6;
var MATCHERS = /* @__PURE__ */ new Map();
var MAX_MATCHERS = 16;
function matcherFor(values, bytes) {
  const key = `${bytes ? "b" : "t"}\0${[...values].sort().join("\0")}`;
  let m = MATCHERS.get(key);
  if (m === void 0) {
    const forms = /* @__PURE__ */ new Set();
    for (const v of values) for (const form of variants(v, bytes)) forms.add(form);
    m = new FormMatcher(forms);
    if (MATCHERS.size >= MAX_MATCHERS) MATCHERS.delete(MATCHERS.keys().next().value);
    MATCHERS.set(key, m);
  }
  return m;
}
var Redactor = class {
  constructor(secrets, bytes = false) {
    this.bytes = bytes;
    this.add(secrets);
  }
  bytes;
  matcher = null;
  known = /* @__PURE__ */ new Set();
  /** The longest text one match can span (for the streaming redactor's look-behind). */
  maxMatch = 0;
  /** How many matches `redact` has masked so far. */
  count = 0;
  /** The values masked (each in every form). */
  get values() {
    return [...this.known];
  }
  /**
   * Adds values found during the run (a token shape the scanner found): from then on they are
   * masked like the values known at the start.
   */
  add(secrets) {
    const before = this.known.size;
    for (const s of secrets) if (s.length >= MIN_SECRET_LENGTH) this.known.add(s);
    if (this.known.size === before && this.matcher !== null) return;
    if (this.known.size === 0) return;
    this.matcher = matcherFor([...this.known], this.bytes);
    this.maxMatch = this.matcher.longest * 3;
  }
  get empty() {
    return this.matcher === null;
  }
  redact(text) {
    if (this.matcher === null) return text;
    return this.maskSpans(text, this.matcher.spans(text));
  }
  /** The text with the given spans (from `matches`, within the text) masked. */
  maskSpans(text, spans) {
    if (spans.length === 0) return text;
    let out = "";
    let at = 0;
    for (const { start, end } of spans) {
      this.count++;
      const lines = text.slice(start, end).split("\n").length - 1;
      out += text.slice(at, start) + MASK + "\n".repeat(lines);
      at = end;
    }
    return out + text.slice(at);
  }
  /** Match spans, for the streaming redactor. */
  matches(text) {
    return this.matcher === null ? [] : this.matcher.spans(text);
  }
  /** Masks every string inside a JSON-like value (keys included). */
  redactValue(value) {
    if (this.matcher === null) return value;
    const walk = (v) => {
      if (typeof v === "string") return this.redact(v);
      if (Array.isArray(v)) return v.map(walk);
      if (typeof v === "object" && v !== null) {
        const out = {};
        for (const [k, x] of Object.entries(v)) out[this.redact(k)] = walk(x);
        return out;
      }
      return v;
    };
    return walk(value);
  }
};
var StreamRedactor = class {
  held = "";
  redactor;
  constructor(secrets) {
    this.redactor = new Redactor(secrets, true);
  }
  /** How many values were masked so far. */
  get count() {
    return this.redactor.count;
  }
  push(chunk) {
    if (this.redactor.empty) return chunk;
    const fresh = this.held === "";
    const text = this.held + chunk.toString("latin1");
    let cut = Math.max(0, text.length - this.redactor.maxMatch);
    const blank = Math.max(text.lastIndexOf("\n\n"), text.lastIndexOf("\n\r\n"));
    if (blank >= 0) cut = Math.max(cut, blank + 1);
    const spans = this.redactor.matches(text);
    for (const m of spans) {
      if (m.start < cut && m.end > cut) cut = m.start;
    }
    this.held = text.slice(cut);
    const before = spans.filter((m) => m.end <= cut);
    if (fresh && before.length === 0) return chunk.subarray(0, cut);
    return Buffer.from(this.redactor.maskSpans(text.slice(0, cut), before), "latin1");
  }
  flush() {
    const rest = this.redactor.redact(this.held);
    this.held = "";
    return Buffer.from(rest, "latin1");
  }
};

// src/egress/host-rules.ts
var net = __toESM(require("node:net"), 1);
var import_ipaddr = __toESM(require_ipaddr(), 1);
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
function isNonPublicAddress(address) {
  if (net.isIP(address) === 0 || !import_ipaddr.default.isValid(address)) return true;
  const ip = import_ipaddr.default.parse(address);
  if (ip.kind() === "ipv4") return ip.range() !== "unicast";
  const v6 = ip;
  const range = v6.range();
  const bytes = v6.toByteArray();
  const v4 = (b) => isNonPublicAddress(import_ipaddr.default.fromByteArray(b).toString());
  switch (range) {
    case "ipv4Mapped":
    case "rfc6145":
    case "rfc6052":
      return v4(bytes.slice(12, 16));
    case "6to4":
      return v4(bytes.slice(2, 6));
    case "teredo":
      return v4(bytes.slice(4, 8)) || v4(bytes.slice(12, 16).map((b) => b ^ 255));
    case "unicast":
      if (bytes.slice(0, 12).every((b) => b === 0)) return true;
      return false;
    default:
      return true;
  }
}
function splitHostPort(authority, defaultPort) {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority);
  const m = v6 ?? /^([^:[\]]+)(?::(\d+))?$/.exec(authority);
  if (!m) return void 0;
  const p = m[2] !== void 0 ? Number(m[2]) : defaultPort;
  if (p === void 0 || !Number.isInteger(p) || p < 1 || p > 65535) return void 0;
  return { host: v6 ? `[${m[1]}]` : m[1], port: p };
}

// src/egress/proxy/proxy-context.ts
var dns = __toESM(require("node:dns"), 1);
var IDLE_MS = 10 * 6e4;
var Connections = class {
  constructor(emit, redact) {
    this.emit = emit;
    this.redact = redact;
  }
  emit;
  redact;
  open = /* @__PURE__ */ new Set();
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
  /** Reports the connections still open, with their bytes so far. */
  finishAll() {
    for (const o of this.open) this.finish(o);
    this.open.clear();
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
};
async function resolveUpstream(host, port, mapping) {
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

// src/egress/proxy/credential.ts
var https = __toESM(require("node:https"), 1);
var net2 = __toESM(require("node:net"), 1);

// src/egress/credential-routes.ts
function pathProblem(path) {
  if (!path.startsWith("/")) return "does not start with /";
  if (path.includes("//")) return "contains //";
  if (/[\\\x00-\x20\x7f]/.test(path)) return "contains a backslash, space or control character";
  if (/%(2e|2f|5c|25|00)/i.test(path)) return "contains an encoded dot, slash, backslash or percent";
  if (path.split("/").some((seg) => seg === "." || seg === ".."))
    return "contains a . or .. segment";
  return void 0;
}
var OVERRIDE_HEADERS = /* @__PURE__ */ new Set([
  "x-http-method-override",
  "x-http-method",
  "x-method-override",
  "x-original-method",
  "x-original-url",
  "x-original-uri",
  "x-rewrite-url",
  "x-override-url",
  "x-envoy-original-path",
  "x-envoy-original-method"
]);
var OVERRIDE_PARAMS = /* @__PURE__ */ new Set([
  "_method",
  "method",
  "_httpmethod",
  "httpmethod",
  "$method",
  "x-http-method-override",
  "x-method-override"
]);
function overrideProblem(headers, query) {
  for (const key of Object.keys(headers)) {
    if (OVERRIDE_HEADERS.has(key.toLowerCase()))
      return `carries the method/URL override header ${key.toLowerCase()}`;
  }
  for (const pair of query.replace(/^\?/, "").split("&")) {
    let name;
    try {
      name = decodeURIComponent(pair.split("=")[0].replace(/\+/g, " "));
    } catch {
      return "has a query parameter that is not valid percent-encoding";
    }
    if (OVERRIDE_PARAMS.has(name.trim().toLowerCase()))
      return `carries the method override parameter ${name.trim().toLowerCase()}`;
  }
  const type = String(headers["content-type"] ?? "").toLowerCase();
  if (/^\s*(application\/x-www-form-urlencoded|multipart\/form-data)/.test(type))
    return `has a form body (${type.split(";")[0].trim()}), which can carry a method override`;
  return void 0;
}
function scopeAllows(scope, method, path) {
  if (scope === void 0) return true;
  return scope.some(
    (s) => (s.method === "*" || s.method === method.toUpperCase()) && (s.prefix === "/" || path === s.prefix || path.startsWith(`${s.prefix}/`))
  );
}

// src/plain-object.ts
function isPlainObject(v) {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// src/egress/transcript.ts
function parseSse(text) {
  const out = [];
  for (const block of text.replace(/\r\n?/g, "\n").split(/\n\n+/)) {
    let event = null;
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":") || line === "") continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (data.length > 0 || event !== null) out.push({ event, data: data.join("\n") });
  }
  return out;
}
var obj = (v) => isPlainObject(v) ? v : void 0;
var num = (v) => typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0;
var str = (v) => typeof v === "string" ? v.slice(0, 200) : null;
function parseJson(s) {
  try {
    return obj(JSON.parse(s));
  } catch {
    return void 0;
  }
}
function usage(u) {
  if (!u) return { input: 0, output: 0 };
  const input = num(u.input_tokens) + num(u.prompt_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens);
  return { input, output: num(u.output_tokens) + num(u.completion_tokens) };
}
function parseExchange(record) {
  const ex = {
    model: null,
    inputTokens: 0,
    outputTokens: 0,
    text: "",
    toolCalls: [],
    streamed: false
  };
  const request3 = parseJson(record.request.body.text);
  ex.model = str(request3?.model);
  const contentType = record.response.headers["content-type"] ?? "";
  const body = record.response.body.text;
  if (contentType.includes("text/event-stream") || /^(event|data):/m.test(body.slice(0, 200))) {
    ex.streamed = true;
    readStream(parseSse(body), ex);
  } else {
    readMessage(parseJson(body), ex);
  }
  return ex;
}
function readMessage(m, ex) {
  if (!m) return;
  ex.model = str(m.model) ?? ex.model;
  const u = usage(obj(m.usage));
  ex.inputTokens += u.input;
  ex.outputTokens += u.output;
  if (Array.isArray(m.content)) {
    for (const b of m.content.map(obj)) {
      if (b?.type === "text" && typeof b.text === "string") ex.text += b.text;
      if (b?.type === "tool_use")
        ex.toolCalls.push({ name: str(b.name) ?? "?", input: JSON.stringify(b.input ?? null) });
    }
  }
  if (Array.isArray(m.choices)) {
    for (const c of m.choices.map(obj)) {
      const msg = obj(c?.message);
      if (typeof msg?.content === "string") ex.text += msg.content;
      if (Array.isArray(msg?.tool_calls)) {
        for (const t of msg.tool_calls.map(obj)) {
          const f = obj(t?.function);
          ex.toolCalls.push({ name: str(f?.name) ?? "?", input: String(f?.arguments ?? "") });
        }
      }
    }
  }
  readGemini(m, ex);
  if (Array.isArray(m.output)) {
    for (const o of m.output.map(obj)) {
      if (o?.type === "function_call")
        ex.toolCalls.push({ name: str(o.name) ?? "?", input: String(o.arguments ?? "") });
      if (o?.type === "custom_tool_call")
        ex.toolCalls.push({ name: str(o.name) ?? "?", input: String(o.input ?? "") });
      if (Array.isArray(o?.content)) {
        for (const c of o.content.map(obj)) {
          if (c?.type === "output_text" && typeof c.text === "string") ex.text += c.text;
        }
      }
    }
  }
}
function readGemini(m, ex) {
  if (!Array.isArray(m.candidates) && obj(m.usageMetadata) === void 0) return;
  ex.model = str(m.modelVersion) ?? ex.model;
  const u = obj(m.usageMetadata);
  if (u) {
    ex.inputTokens = num(u.promptTokenCount);
    ex.outputTokens = num(u.candidatesTokenCount) + num(u.thoughtsTokenCount);
  }
  for (const c of (Array.isArray(m.candidates) ? m.candidates : []).map(obj)) {
    const parts = obj(c?.content)?.parts;
    for (const part of (Array.isArray(parts) ? parts : []).map(obj)) {
      if (typeof part?.text === "string" && part.thought !== true) ex.text += part.text;
      const call = obj(part?.functionCall);
      if (call)
        ex.toolCalls.push({ name: str(call.name) ?? "?", input: JSON.stringify(call.args ?? null) });
    }
  }
}
function readStream(events, ex) {
  const blocks = /* @__PURE__ */ new Map();
  const openaiTools = /* @__PURE__ */ new Map();
  let responsesDone = false;
  const responseItems = [];
  for (const e of events) {
    if (e.data === "[DONE]") continue;
    const d = parseJson(e.data);
    if (!d) continue;
    const type = str(d.type) ?? e.event;
    switch (type) {
      // Anthropic messages stream.
      case "message_start": {
        const m = obj(d.message);
        ex.model = str(m?.model) ?? ex.model;
        const u = usage(obj(m?.usage));
        ex.inputTokens += u.input;
        ex.outputTokens += u.output;
        break;
      }
      case "content_block_start": {
        const b = obj(d.content_block);
        if (b?.type === "tool_use")
          blocks.set(num(d.index), { name: str(b.name) ?? "?", input: "" });
        if (b?.type === "text" && typeof b.text === "string") ex.text += b.text;
        break;
      }
      case "content_block_delta": {
        const delta = obj(d.delta);
        if (delta?.type === "text_delta" && typeof delta.text === "string") ex.text += delta.text;
        if (delta?.type === "input_json_delta" && typeof delta.partial_json === "string") {
          const b = blocks.get(num(d.index));
          if (b) b.input += delta.partial_json;
        }
        break;
      }
      case "message_delta": {
        const u = obj(d.usage);
        if (u && typeof u.output_tokens === "number") ex.outputTokens = num(u.output_tokens);
        if (u && typeof u.input_tokens === "number" && ex.inputTokens === 0)
          ex.inputTokens = num(u.input_tokens);
        break;
      }
      // OpenAI responses stream.
      case "response.output_text.delta":
        if (!responsesDone && typeof d.delta === "string") ex.text += d.delta;
        break;
      case "response.output_item.done": {
        const item = obj(d.item);
        if (item) responseItems.push(item);
        break;
      }
      case "response.completed": {
        const r = obj(d.response);
        ex.model = str(r?.model) ?? ex.model;
        const u = usage(obj(r?.usage));
        ex.inputTokens = u.input;
        ex.outputTokens = u.output;
        responsesDone = true;
        const output = Array.isArray(r?.output) && r.output.length > 0 ? r.output.map(obj) : responseItems;
        const streamedText = ex.text;
        ex.text = "";
        readMessage({ output: output.filter((o) => o !== void 0) }, ex);
        if (streamedText !== "") ex.text = streamedText;
        break;
      }
      default: {
        if (Array.isArray(d.candidates) || obj(d.usageMetadata) !== void 0) {
          readGemini(d, ex);
          break;
        }
        if (Array.isArray(d.choices) || d.object === "chat.completion.chunk") {
          ex.model = str(d.model) ?? ex.model;
          for (const c of (Array.isArray(d.choices) ? d.choices : []).map(obj)) {
            const delta = obj(c?.delta);
            if (typeof delta?.content === "string") ex.text += delta.content;
            if (Array.isArray(delta?.tool_calls)) {
              for (const t of delta.tool_calls.map(obj)) {
                const i = num(t?.index);
                const f = obj(t?.function);
                const cur = openaiTools.get(i) ?? { name: "?", input: "" };
                if (typeof f?.name === "string") cur.name = f.name.slice(0, 200);
                if (typeof f?.arguments === "string") cur.input += f.arguments;
                openaiTools.set(i, cur);
              }
            }
          }
          const u = obj(d.usage);
          if (u) {
            const p = usage(u);
            ex.inputTokens = p.input;
            ex.outputTokens = p.output;
          }
        }
      }
    }
  }
  ex.toolCalls.push(...blocks.values(), ...openaiTools.values());
}

// src/egress/reflection.ts
var import_node_stream = require("node:stream");
var zlib = __toESM(require("node:zlib"), 1);
var BODY_HEADERS = ["content-length", "content-md5", "digest", "content-digest", "repr-digest"];
function decoder(encoding) {
  switch (encoding) {
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip();
    case "deflate":
      return zlib.createInflate();
    case "br":
      return zlib.createBrotliDecompress();
    default:
      return void 0;
  }
}
function filterResponse(upstream, headers, secrets) {
  const text = new Redactor(secrets);
  const out = {};
  for (const [k, v] of Object.entries(headers)) {
    const key = k.toLowerCase();
    if (BODY_HEADERS.includes(key)) continue;
    out[text.redact(key)] = Array.isArray(v) ? v.map((x) => text.redact(x)) : text.redact(v);
  }
  const encodings = String(out["content-encoding"] ?? "").split(",").map((e) => e.trim().toLowerCase()).filter((e) => e !== "" && e !== "identity");
  const decoders = [];
  for (const e of encodings.reverse()) {
    const d = decoder(e);
    if (!d)
      return { error: `content-encoding ${e.replace(/[^a-z0-9-]/g, "?")} cannot be inspected` };
    decoders.push(d);
  }
  delete out["content-encoding"];
  const body = new StreamRedactor(secrets);
  const mask = new import_node_stream.Transform({
    transform(chunk, _enc, done) {
      done(null, body.push(chunk));
    },
    flush(done) {
      done(null, body.flush());
    }
  });
  const result = new import_node_stream.PassThrough();
  (0, import_node_stream.pipeline)([upstream, ...decoders, mask, result], (error) => {
    if (error) result.destroy(error);
  });
  return { headers: out, body: result, reflected: () => text.count + body.count };
}

// src/egress/proxy/headers.ts
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
function agentOnlyHeader(key) {
  return key === "forwarded" || key === "via" || key === "x-real-ip" || key === "true-client-ip" || key === "x-client-ip" || key.startsWith("x-forwarded-") || key.startsWith("proxy-");
}
function redactHeaders(headers, extra = []) {
  const out = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === void 0) continue;
    const key = k.toLowerCase();
    out[key] = SECRET_HEADERS.has(key) || extra.includes(key) ? "[REDACTED]" : Array.isArray(v) ? v.join(", ") : String(v);
  }
  return out;
}
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
function forwardRequestHeaders(headers, drop) {
  const out = forwardHeaders(headers, drop);
  for (const key of Object.keys(out)) if (agentOnlyHeader(key)) delete out[key];
  return out;
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

// src/egress/proxy/exchange.ts
function pipeExchange(ctx, req, res, up, o, record, secrets) {
  up.setTimeout(IDLE_MS, () => up.destroy(new Error("idle timeout")));
  req.on("data", (c) => {
    o.event.bytesUp += c.length;
    record?.request.push(c);
  });
  req.pipe(up);
  up.on("response", (upRes) => {
    const status = upRes.statusCode ?? 502;
    o.event.status = status;
    let headers = forwardHeaders(upRes.headers, []);
    let body = upRes;
    let reflected = () => 0;
    if (secrets) {
      const filtered = filterResponse(upRes, headers, secrets);
      if ("error" in filtered) {
        upRes.destroy();
        o.event.allowed = false;
        o.event.reason = "unsupported-encoding";
        o.event.detail = filtered.error;
        o.event.status = 502;
        res.writeHead(502, {
          "x-airlock-denied": "unsupported-encoding",
          "content-type": "text/plain"
        }).end(`airlock: the upstream answered ${status} with a ${filtered.error}
`);
        ctx.connections.finish(o);
        return;
      }
      headers = filtered.headers;
      body = filtered.body;
      reflected = filtered.reflected;
      if (status >= 400) o.event.detail = `the upstream answered ${status}`;
    }
    res.writeHead(status, headers);
    const count = () => {
      const n = reflected();
      if (n > 0) o.event.reflected = n;
    };
    count();
    body.on("data", (c) => {
      o.event.bytesDown += c.length;
      record?.response.push(c);
      count();
    });
    body.pipe(res);
    body.on("end", () => {
      count();
      record?.onEnd(status);
      ctx.connections.finish(o);
    });
    body.on("error", () => res.destroy());
  });
  up.on("error", (error) => {
    if (o.event.status === void 0) {
      const why = ctx.redact(error.code ?? error.message).replace(/[^\x20-\x7e]/g, "?");
      o.event.allowed = false;
      o.event.reason = secrets ? "upstream-failed" : "connect-failed";
      o.event.detail = why.slice(0, 200);
      o.event.status = 502;
      if (!res.headersSent) {
        res.writeHead(502, {
          "x-airlock-denied": o.event.reason,
          "content-type": "text/plain"
        });
      }
      res.end(`airlock: the upstream could not be reached (${why.slice(0, 200)})
`);
    } else {
      res.destroy();
    }
    ctx.connections.finish(o);
  });
  res.on("close", () => {
    up.destroy();
    ctx.connections.finish(o);
  });
}

// src/egress/proxy/recorder.ts
var import_node_crypto = require("node:crypto");
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

// src/egress/proxy/credential.ts
async function forwardCredential(ctx, req, res, pathAndQuery) {
  const method = req.method ?? "?";
  const m = /^\/([A-Za-z][A-Za-z0-9_]*)(\/[^?#]*)?(\?[^#]*)?$/.exec(pathAndQuery);
  const route = m ? ctx.config.credentials.find((c) => c.name === m[1]) : void 0;
  const refuse = (status, reason, detail, host2, port2, extra = {}) => {
    ctx.connections.deny("credential", method, host2, port2, reason, detail);
    res.writeHead(status, { "x-airlock-denied": reason, "content-type": "text/plain", ...extra }).end(`airlock: ${detail}
`);
  };
  if (!m || !route) {
    refuse(404, "bad-request", "no such credential route", pathAndQuery.slice(0, 200), 0);
    return;
  }
  const upstream = new URL(route.upstream);
  const port = upstream.port !== "" ? Number(upstream.port) : 443;
  const host = upstream.hostname;
  const sub = m[2] ?? "/";
  const problem = pathProblem(sub);
  if (problem !== void 0) {
    refuse(400, "bad-path", `the path ${problem}; it is refused before any matching`, host, port);
    return;
  }
  if (!scopeAllows(route.scope, method, sub)) {
    const allowed = (route.scope ?? []).map((s) => `${s.method} ${s.prefix}`).join(", ");
    refuse(403, "route-scope", `route ${route.name} allows only ${allowed}`, host, port);
    return;
  }
  const override = route.scope === void 0 ? void 0 : overrideProblem(req.headers, m[3] ?? "");
  if (override !== void 0) {
    refuse(403, "route-scope", `route ${route.name} is scoped; the request ${override}`, host, port);
    return;
  }
  const over = ctx.budget.admit();
  if (over !== void 0) {
    ctx.connections.deny("credential", method, host, port, "budget-exceeded", over);
    res.writeHead(429, {
      "x-airlock-denied": "budget-exceeded",
      "x-should-retry": "false",
      "content-type": "application/json"
    }).end(
      JSON.stringify({
        type: "error",
        error: {
          type: "rate_limit_error",
          message: `airlock: ${over}; the run's budget is spent`
        }
      })
    );
    return;
  }
  const mapping = ctx.config.hostMap.find((h) => h.host === host);
  const to = await resolveUpstream(host, port, mapping);
  if ("reason" in to) {
    refuse(502, to.reason, to.detail, host, port);
    return;
  }
  const path = `${upstream.pathname.replace(/\/$/, "")}${m[2] ?? ""}${m[3] ?? ""}` || "/";
  const headerName = secretHeaderName(route);
  const headers = forwardRequestHeaders(req.headers, [headerName]);
  headers.host = upstream.host;
  headers["accept-encoding"] = "identity";
  headers[headerName] = route.header.kind === "bearer" ? `Bearer ${route.secret}` : route.secret;
  const o = ctx.connections.track({
    type: "egress",
    time: (/* @__PURE__ */ new Date()).toISOString(),
    kind: "credential",
    method,
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
  const request3 = new Recorder(ctx.config.maxRecordBytes);
  const response = new Recorder(ctx.config.maxRecordBytes);
  let up;
  try {
    up = https.request({
      host: to.address,
      port: to.port,
      servername: net2.isIP(host) === 0 ? host : void 0,
      method,
      path,
      headers,
      agent: ctx.httpsAgent,
      setHost: false,
      ...ctx.secureContext ? { secureContext: ctx.secureContext } : {}
    });
  } catch (error) {
    const why = error.code ?? "invalid request";
    o.event.allowed = false;
    o.event.reason = "upstream-failed";
    o.event.detail = why;
    o.event.status = 502;
    res.writeHead(502, { "x-airlock-denied": "upstream-failed", "content-type": "text/plain" }).end(`airlock: the request could not be sent upstream (${why})
`);
    ctx.connections.finish(o);
    return;
  }
  let upHeaders = {};
  up.on("response", (r) => upHeaders = r.headers);
  const redact = (s) => ctx.redact(s);
  pipeExchange(
    ctx,
    req,
    res,
    up,
    o,
    {
      request: request3,
      response,
      onEnd: (status) => {
        const record = {
          type: "transcript",
          time: new Date(started).toISOString(),
          route: route.name,
          method,
          path: redact(path),
          status,
          durationMs: Date.now() - started,
          request: {
            headers: redactHeaders(req.headers, [headerName]),
            body: request3.body(redact)
          },
          response: {
            // As the agent got them: the values masked (a reflecting upstream echoes the key).
            headers: Object.fromEntries(
              Object.entries(redactHeaders(upHeaders, [headerName])).map(([k, v]) => [
                redact(k),
                redact(v)
              ])
            ),
            body: response.body(redact)
          }
        };
        const ex = parseExchange(record);
        ctx.budget.addExchange(ex.model, ex.inputTokens, ex.outputTokens);
        ctx.emit(record);
      }
    },
    ctx.secrets
  );
}

// src/egress/proxy/tunnel.ts
var net3 = __toESM(require("node:net"), 1);

// src/egress/sni.ts
var MAX_HELLO_BYTES = 32 * 1024;
var EXT_SERVER_NAME = 0;
var EXT_ECH = 65037;
function parseClientHello(data) {
  const handshake = [];
  let have = 0;
  let offset = 0;
  let needed;
  while (needed === void 0 || have < needed) {
    if (data.length < offset + 5) return more(data);
    if (data[offset] !== 22) return { status: "not-tls", detail: "not a TLS handshake" };
    if (data[offset + 1] !== 3) return { status: "not-tls", detail: "not a TLS record version" };
    const len = data.readUInt16BE(offset + 3);
    if (len === 0 || len > 16384 + 256) return { status: "not-tls", detail: "bad record length" };
    if (data.length < offset + 5 + len) return more(data);
    handshake.push(data.subarray(offset + 5, offset + 5 + len));
    have += len;
    offset += 5 + len;
    if (needed === void 0) {
      const first = Buffer.concat(handshake);
      if (first.length < 4) continue;
      if (first[0] !== 1) return { status: "not-tls", detail: "not a ClientHello" };
      needed = 4 + first.readUIntBE(1, 3);
      if (needed > MAX_HELLO_BYTES) return { status: "not-tls", detail: "ClientHello too large" };
    }
  }
  return readHello(Buffer.concat(handshake).subarray(4, needed));
}
function more(data) {
  return data.length >= MAX_HELLO_BYTES ? { status: "not-tls", detail: "no ClientHello within the first bytes" } : { status: "need-more" };
}
function readHello(b) {
  const bad = { status: "not-tls", detail: "malformed ClientHello" };
  let p = 2 + 32;
  if (p + 1 > b.length) return bad;
  p += 1 + b[p];
  if (p + 2 > b.length) return bad;
  p += 2 + b.readUInt16BE(p);
  if (p + 1 > b.length) return bad;
  p += 1 + b[p];
  if (p === b.length) return { status: "ok", serverName: null, encrypted: false };
  if (p + 2 > b.length) return bad;
  const end = p + 2 + b.readUInt16BE(p);
  if (end > b.length) return bad;
  p += 2;
  let serverName = null;
  let encrypted = false;
  let names = 0;
  while (p < end) {
    if (p + 4 > end) return bad;
    const type = b.readUInt16BE(p);
    const len = b.readUInt16BE(p + 2);
    const body = p + 4;
    if (body + len > end) return bad;
    if (type === EXT_ECH) encrypted = true;
    if (type === EXT_SERVER_NAME) {
      names++;
      if (len < 2) return bad;
      const listEnd = body + 2 + b.readUInt16BE(body);
      if (listEnd > body + len) return bad;
      let q = body + 2;
      while (q < listEnd) {
        if (q + 3 > listEnd) return bad;
        const nameType = b[q];
        const nameLen = b.readUInt16BE(q + 1);
        if (q + 3 + nameLen > listEnd) return bad;
        if (nameType === 0) {
          if (serverName !== null) return { status: "not-tls", detail: "two server names" };
          serverName = b.subarray(q + 3, q + 3 + nameLen).toString("latin1");
        }
        q += 3 + nameLen;
      }
    }
    p = body + len;
  }
  if (names > 1) return { status: "not-tls", detail: "two server_name extensions" };
  return { status: "ok", serverName, encrypted };
}

// src/egress/proxy/tunnel.ts
var HELLO_MS = 1e4;
async function tunnel(ctx, req, client, head) {
  const target = splitHostPort(req.url ?? "");
  if (!target) {
    ctx.connections.deny("connect", "CONNECT", req.url ?? "", 0, "bad-request", "not host:port");
    client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
    return;
  }
  const check0 = checkHost(ctx.config.allow, ctx.config.hostMap, target.host, target.port);
  if (!check0.ok) {
    ctx.connections.deny(
      "connect",
      "CONNECT",
      target.host,
      target.port,
      check0.reason,
      check0.detail
    );
    client.end(`HTTP/1.1 403 Forbidden\r
X-Airlock-Denied: ${check0.reason}\r
\r
`);
    return;
  }
  const check = check0;
  const to = await resolveUpstream(check.host, target.port, check.mapping);
  if ("reason" in to) {
    ctx.connections.deny("connect", "CONNECT", check.host, target.port, to.reason, to.detail);
    client.end(`HTTP/1.1 403 Forbidden\r
X-Airlock-Denied: ${to.reason}\r
\r
`);
    return;
  }
  const o = ctx.connections.track({
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
  const upstream = net3.connect({ host: to.address, port: to.port });
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
    let hello = head;
    const timer = setTimeout(() => refuse("no ClientHello within 10 s"), HELLO_MS);
    client.once("close", () => clearTimeout(timer));
    const refuse = (detail) => {
      clearTimeout(timer);
      if (client.destroyed) return;
      client.off("data", onHello);
      o.event.allowed = false;
      o.event.reason = "sni-mismatch";
      o.event.detail = detail;
      client.destroy();
      upstream.destroy();
    };
    const onHello = (c) => {
      hello = Buffer.concat([hello, c]);
      inspect();
    };
    const inspect = () => {
      const parsed = parseClientHello(hello);
      if (parsed.status === "need-more") return;
      if (parsed.status === "not-tls") return refuse(`not a TLS ClientHello (${parsed.detail})`);
      const name = parsed.serverName === null ? void 0 : normalizeHost(parsed.serverName);
      if (parsed.serverName === null) return refuse("the ClientHello names no server (no SNI)");
      if (parsed.encrypted) return refuse("encrypted ClientHello: the real server name is hidden");
      if (name !== check.host) {
        const shown = parsed.serverName.replace(/[^A-Za-z0-9.-]/g, "?").slice(0, 100);
        return refuse(`SNI ${shown} differs from the CONNECT host ${check.host}`);
      }
      clearTimeout(timer);
      client.off("data", onHello);
      o.event.bytesUp += hello.length;
      upstream.write(hello);
      client.on("data", (d) => o.event.bytesUp += d.length);
      upstream.on("data", (d) => o.event.bytesDown += d.length);
      client.pipe(upstream);
      upstream.pipe(client);
    };
    client.on("data", onHello);
    if (hello.length > 0) inspect();
  });
  const done = () => {
    upstream.destroy();
    client.destroy();
    ctx.connections.finish(o);
  };
  upstream.on("close", done);
  client.on("close", done);
}

// src/egress/proxy.ts
var EgressProxy = class {
  server;
  ctx;
  constructor(config, emit) {
    const secrets = config.credentials.map((c) => c.secret).filter((s) => s.length > 0);
    const masker = new Redactor(secrets);
    const redact = (text) => masker.redact(text);
    this.ctx = {
      config,
      connections: new Connections(emit, redact),
      budget: new Budget(config.budget ?? {}),
      httpAgent: new http.Agent({ keepAlive: true, maxSockets: 64 }),
      httpsAgent: new https2.Agent({ keepAlive: true, maxSockets: 64 }),
      secureContext: config.extraCa ? tls.createSecureContext({ ca: [...tls.rootCertificates, config.extraCa] }) : void 0,
      secrets,
      redact,
      emit
    };
    this.server = http.createServer({ requestTimeout: 0 }, (req, res) => {
      this.onRequest(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
    });
    this.server.on("connect", (req, socket, head) => {
      tunnel(this.ctx, req, socket, head).catch(() => socket.destroy());
    });
    this.server.maxConnections = 512;
    this.server.on("clientError", (_err, socket) => {
      socket.destroy();
    });
  }
  listen() {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.ctx.config.listen.port, this.ctx.config.listen.host, () => {
        resolve(this.server.address());
      });
    });
  }
  /** Stops accepting, reports the connections still open with their bytes so far. */
  async close() {
    this.ctx.connections.finishAll();
    this.server.closeAllConnections?.();
    this.ctx.httpAgent.destroy();
    this.ctx.httpsAgent.destroy();
    await new Promise((resolve) => this.server.close(() => resolve()));
  }
  get budgetState() {
    return this.ctx.budget.state;
  }
  /** Plain http:// to an allowlisted host, or a credential route (`/NAME/...`). */
  async onRequest(req, res) {
    const raw = req.url ?? "";
    if (raw.startsWith("/")) return forwardCredential(this.ctx, req, res, raw);
    let url;
    try {
      url = new URL(raw);
    } catch {
      this.ctx.connections.deny(
        "http",
        req.method ?? "?",
        raw.slice(0, 200),
        0,
        "bad-request",
        "not a URL"
      );
      res.writeHead(400).end();
      return;
    }
    const hostname = url.hostname.replace(/^\[|\]$/g, "");
    if (url.protocol === "http:" && this.ctx.config.selfNames.includes(normalizeHost(hostname) ?? "")) {
      return forwardCredential(this.ctx, req, res, url.pathname + url.search);
    }
    const port = url.port !== "" ? Number(url.port) : 80;
    if (url.protocol !== "http:") {
      this.ctx.connections.deny(
        "http",
        req.method ?? "?",
        url.hostname,
        port,
        "bad-request",
        "only http:// here"
      );
      res.writeHead(400).end();
      return;
    }
    const check = checkHost(this.ctx.config.allow, this.ctx.config.hostMap, url.hostname, port);
    if (!check.ok) {
      this.ctx.connections.deny(
        "http",
        req.method ?? "?",
        url.hostname,
        port,
        check.reason,
        check.detail
      );
      res.writeHead(403, { "x-airlock-denied": check.reason }).end();
      return;
    }
    const to = await resolveUpstream(check.host, port, check.mapping);
    if ("reason" in to) {
      this.ctx.connections.deny("http", req.method ?? "?", check.host, port, to.reason, to.detail);
      res.writeHead(403, { "x-airlock-denied": to.reason }).end();
      return;
    }
    const headers = forwardRequestHeaders(req.headers, []);
    headers.host = url.host;
    const o = this.ctx.connections.track({
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
      agent: this.ctx.httpAgent,
      setHost: false
    });
    pipeExchange(this.ctx, req, res, up, o);
  }
};

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
