// Package politeness holds what one queue, one request in flight and
// one delay apply to: the politeness key of a URL ([Keys]: its host, or
// in ip mode the address its host resolves to), the delay rule between
// two requests to one server ([Delay]), and the units a URL belongs to
// ([Origin] for robots.txt, [Host] for the host splitter and DNS).
package politeness
