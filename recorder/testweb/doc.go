// Package testweb serves a deterministic synthetic web for crawling offline.
//
// A [Web] is a set of virtual hosts chosen by the HTTP Host header:
// generated hosts h0001.test, h0002.test, ... (Config.Hosts of them, each
// with Config.PagesPerHost pages), a few crawler-trap hosts trap1.test, ...,
// and optionally directories of static HTML served as hosts (Config.Sites,
// a mirror of a real site). A crawler reaches every host at one address by
// mapping host names to it (curl's --resolve 'h0001.test:80:127.0.0.1' or a
// crawler's "*:127.0.0.1:PORT" rule): URLs carry no port, e.g.
// http://h0001.test/p/17.html. Addressed directly by IP address or
// localhost (http://127.0.0.1:PORT/), the server answers with a root index
// linking to every host's home page, and /seeds.txt lists the seed URLs.
//
// # URL space of a generated host
//
//	/                 home page (page 0)
//	/p/ID.html        page ID, 1 <= ID < PagesPerHost (ids beyond answer 404)
//	/p/ID.html?ref=N&lang=en  a query variant: the same page under another URL
//	/private/ID.html  a small page, disallowed where robots.txt has rules
//	/img/ID.png /js/ID.js /css/ID.css  resources (a few per host)
//	/search           a form's action
//	/robots.txt       Disallow rules on RobotsFraction of hosts, an allow-all
//	                  file or 404 on the others
//
// Trap hosts serve an infinite calendar (/cal/2024/01 links to /cal/2024/02
// and so on forever) and an infinitely deep path (/a/ links to /a/a/, ...).
//
// # Pages
//
// Every page is generated on the fly from (seed, host, page id) with a
// splitmix64 generator; nothing is stored and no request takes a global
// lock. The statistics follow Broder, Najork and Wiener's crawl: the number
// of links per page is log-normal with median 23 and mean 62.55 (some pages
// have thousands), about 30% of a page's links repeat another link of the
// same page, about 80% stay on the page's host, cross-host targets follow
// Zipf popularity over hosts and pages, and each host has a pool of shared
// links (stylesheet, script, logo, home, search form, popular pages,
// partner sites) that most of its pages carry, the host locality the paper
// gives as the reason for the caches' critical point. Links are mostly <a
// href>, plus img src and srcset, script src, link href, iframe src, form
// action, area href and a few meta refreshes; some pages have a <base
// href>. References are written absolute, scheme-relative, root-relative or
// relative, with fragments, upper-case host names and all three attribute
// quotings, so that they exercise an extractor's URL resolution and
// normalization. [Web.Links] is the ground truth: the absolute, normalized
// URLs in document order.
//
// A few percent of pages answer 301 or 302 (some Location headers relative,
// some to another host), 404, 500 or 503, each a deterministic function of
// the URL ([Web.Status]). Resources are served with their content types;
// some hosts gzip their answers when asked. With Config.Latency, hosts have
// response-time and connection-time distributions; with
// Config.KeepAliveLimits, hosts close persistent connections after 1 to 100
// requests, as Cao, Jiang and Singh measured. [Web.Quality] is the quality
// oracle of their quality-first schedulers: PageRank of the link graph, or
// Zipf values.
//
// [Serve] runs a server on a TCP address; [Web.Handler] can be mounted
// anywhere (httptest, a benchmark). [ServeWebTLS] serves a web over HTTPS:
// a [CA] made for the run signs, on each host's first handshake, a
// certificate for that host's name (a name the web does not serve gets
// none); a crawler trusts the CA's PEM ([CA.PEM], crawl --ca-file).
package testweb
