// Package urlnorm turns the URLs a crawler meets into the one canonical
// string that is logged by the host splitter and fingerprinted by the
// condenser. Two URLs that normalize to the same string are the same URL for
// every later stage (caching, duplicate elimination, partitioning), so the
// rules below are part of the trace format and must not change silently;
// pinned test vectors guard them.
//
// # Rules
//
// Parsing follows the WHATWG URL Standard (via
// github.com/nlnwa/whatwg-url), the same parser browsers use, so relative
// references resolve exactly as a browser would resolve them. On top of it:
//
//  1. Only the schemes http and https are accepted; any other scheme
//     (mailto, javascript, ftp, data, ...) is an error wrapping
//     [ErrUnsupportedScheme]. The scheme is lower-cased.
//  2. User information ("user:pass@") is removed: credentials must never be
//     written to a trace, and they do not name a different resource.
//  3. The host is lower-cased; internationalized names are converted to
//     punycode (UTS #46, non-transitional, as in WHATWG domain-to-ASCII);
//     percent-escapes in the host are decoded first; IPv4 addresses in any
//     WHATWG-accepted form (decimal, octal, hex, fewer than four parts) are
//     printed as dotted decimal; IPv6 addresses are printed in their
//     shortest bracketed form. After that the host must consist only of
//     a-z, 0-9, '-', '_' and '.', or be an IPv6 literal; anything else
//     (for example "a{b}.com") is an error wrapping [ErrInvalid]. A trailing
//     dot is kept ("example.com." and "example.com" are distinct).
//  4. The port is dropped when it is the scheme's default (80 for http, 443
//     for https) and otherwise printed in decimal without leading zeros.
//  5. The path always starts with "/" (an empty path becomes "/"); "\" is
//     treated as "/"; "." and ".." segments, including their percent-encoded
//     forms ("%2e", ".%2E"), are resolved; consecutive slashes are kept.
//  6. Characters outside the WHATWG path (resp. special-query) percent-encode
//     sets are percent-encoded as UTF-8, a "%" that does not start a valid
//     escape becomes "%25", and then every escape in the path and the query
//     is normalized as in RFC 3986 section 6.2.2: escapes of unreserved
//     characters (A-Z a-z 0-9 - . _ ~) are decoded and all other escapes
//     use upper-case hex digits ("%7e" -> "~", "%2f" -> "%2F").
//  7. The query is kept byte for byte after step 6, including an empty
//     query ("http://a/?" stays distinct from "http://a/"); parameters are
//     not sorted.
//  8. The fragment ("#...") is removed.
//  9. Leading and trailing C0 controls and spaces are trimmed and tabs and
//     newlines inside the URL are removed (WHATWG).
//
// The result is a fixed point (Normalize(Normalize(x)) == Normalize(x)) and
// always parses with net/url; FuzzNormalize checks both.
//
// Normalize first tests whether its input is already canonical with a
// conservative byte scan (ASCII only, lower-case host of letters, digits,
// '-' and '.' not ending in a number and without punycode labels, a
// non-default port, a path of safe characters without dot segments,
// normalized escapes, no fragment); such input is returned unchanged without
// allocating. [Base.Resolve] likewise joins already-canonical path-absolute
// ("/a/b?q") and path-relative ("a/b?q", "../a/b", no scheme) references,
// with or without a fragment, to the base's origin or directory without the
// parser. FuzzNormalize checks that
// every fast path agrees with the full parser.
//
// Errors are one line, prefixed "urlnorm: ", and quote the offending URL
// (truncated to 200 bytes).
package urlnorm
