package addomain

import (
	"fmt"
	"strings"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"
)

// filter is a compiled RFC 4515 search filter (go-ldap's compiler, which is
// what clients send: RFC 4511 §4.5.1.7).
type filter struct{ p *ber.Packet }

func compileFilter(s string) (filter, error) {
	if s == "" {
		s = "(objectClass=*)"
	}
	p, err := ldap.CompileFilter(s)
	if err != nil {
		return filter{}, fmt.Errorf("sandbox: filter %q: %w", s, err)
	}
	if err := supported(p); err != nil {
		return filter{}, err
	}
	return filter{p: p}, nil
}

// supported refuses the filter kinds the directory does not evaluate.
func supported(p *ber.Packet) error {
	switch p.Tag {
	case ldap.FilterAnd, ldap.FilterOr, ldap.FilterNot:
		for _, c := range p.Children {
			if err := supported(c); err != nil {
				return err
			}
		}
		return nil
	case ldap.FilterEqualityMatch, ldap.FilterPresent, ldap.FilterSubstrings:
		return nil
	}
	return fmt.Errorf("sandbox: the filter %s is not modelled by the sandbox's domain controller", ldap.FilterMap[uint64(p.Tag)])
}

func (f filter) matches(e *entry) bool { return match(f.p, e) }

func match(p *ber.Packet, e *entry) bool {
	switch p.Tag {
	case ldap.FilterAnd:
		for _, c := range p.Children {
			if !match(c, e) {
				return false
			}
		}
		return true
	case ldap.FilterOr:
		for _, c := range p.Children {
			if match(c, e) {
				return true
			}
		}
		return false
	case ldap.FilterNot:
		return !match(p.Children[0], e)
	case ldap.FilterPresent:
		return len(e.get(p.Data.String())) > 0
	case ldap.FilterEqualityMatch:
		attr := p.Children[0].Value.(string)
		want := p.Children[1].Data.String()
		for _, v := range e.get(attr) {
			if equalValue(attr, v, want) {
				return true
			}
		}
		return false
	case ldap.FilterSubstrings:
		attr := p.Children[0].Value.(string)
		for _, v := range e.get(attr) {
			if substrings(strings.ToLower(v), p.Children[1].Children) {
				return true
			}
		}
	}
	return false
}

// equalValue compares as AD's syntaxes do: DNs by their normal form, the
// rest (names, classes, SIDs in string form) without regard to case.
func equalValue(attr, have, want string) bool {
	switch strings.ToLower(attr) {
	case "distinguishedname", "member", "memberof":
		return normDN(have) == normDN(want)
	}
	return strings.EqualFold(have, want)
}

func substrings(v string, parts []*ber.Packet) bool {
	for i, part := range parts {
		s := strings.ToLower(part.Data.String())
		switch part.Tag {
		case ldap.FilterSubstringsInitial:
			if !strings.HasPrefix(v, s) {
				return false
			}
			v = v[len(s):]
		case ldap.FilterSubstringsFinal:
			return strings.HasSuffix(v, s)
		default:
			j := strings.Index(v, s)
			if j < 0 {
				return false
			}
			v = v[j+len(s):]
		}
		_ = i
	}
	return true
}
