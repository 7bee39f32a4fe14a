package access

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/vesta-go/vesta/intf"
)

// TokenPrefix starts every token NewToken makes, so that secret scanners
// and people recognise one in a file or a paste.
const TokenPrefix = "vesta_"

// MaxHeaderBytes bounds an Authorization header (and an RPC call's token):
// longer ones are refused before anything is hashed.
const MaxHeaderBytes = 4 << 10

// NewToken returns a new random token: TokenPrefix and 32 bytes from
// crypto/rand in unpadded base64url (256 bits: not guessable, and not
// worth slowing down with a password hash).
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("access: reading random bytes: %w", err)
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// HashToken is the SHA-256 of a token, as an auth file's tokenSHA256
// holds it (hex).
func HashToken(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// HashTokenHex is HashToken in lower-case hex.
func HashTokenHex(token string) string {
	sum := HashToken(token)
	return hex.EncodeToString(sum[:])
}

// Reason says why a call was refused; the metrics count refusals by it.
type Reason string

// The reasons, in the order Stats reports them.
const (
	ReasonNoToken      Reason = "no_token"      // no Authorization header, or an empty RPC token
	ReasonBadScheme    Reason = "bad_scheme"    // an Authorization scheme other than Bearer
	ReasonMalformed    Reason = "malformed"     // several headers, a bad character, no token after Bearer
	ReasonOversized    Reason = "oversized"     // a header (or token) over MaxHeaderBytes
	ReasonUnknownToken Reason = "unknown_token" // a well-formed token no client has
	ReasonScope        Reason = "scope"         // a known token without the call's scope
	ReasonRateLimited  Reason = "rate_limited"  // over the quota
)

var reasons = [...]Reason{ReasonNoToken, ReasonBadScheme, ReasonMalformed, ReasonOversized, ReasonUnknownToken,
	ReasonScope, ReasonRateLimited}

func reasonIndex(r Reason) int {
	if i := slices.Index(reasons[:], r); i >= 0 {
		return i
	}
	return len(reasons) - 1 // not one of ours: counted with the last
}

// TokenError is why a call carried no usable token. It matches
// intf.ErrUnauthenticated under errors.Is. Its message never quotes the
// token.
type TokenError struct {
	Reason Reason
	Msg    string
}

func (e *TokenError) Error() string { return "unauthenticated: " + e.Msg }

// Is makes errors.Is(err, intf.ErrUnauthenticated) true.
func (e *TokenError) Is(target error) bool { return target == intf.ErrUnauthenticated }

// Malformed says whether the request itself is broken (HTTP 400), as
// opposed to carrying no credentials or unknown ones (HTTP 401).
func (e *TokenError) Malformed() bool {
	return e.Reason == ReasonMalformed || e.Reason == ReasonOversized
}

// The refusals. A caller is told what its own door wants: an HTTP
// request a header (BearerToken), an RPC call a token in its arguments,
// which the Go client sends with every call once made with
// client.WithToken (Authenticate).
var (
	errNoHeader = &TokenError{Reason: ReasonNoToken,
		Msg: "no token: send the header Authorization: Bearer <token>"}
	errNoCallToken = &TokenError{Reason: ReasonNoToken,
		Msg: "no token: the call carries none: make the client with client.WithToken(token)"}
	errNoToken      = &TokenError{Reason: ReasonNoToken, Msg: "no token"}
	errUnknownToken = &TokenError{Reason: ReasonUnknownToken, Msg: "the token is not known to this server"}
	errBadScheme    = &TokenError{Reason: ReasonBadScheme,
		Msg: "Authorization header: want the Bearer scheme (Authorization: Bearer <token>)"}
	errManyHeaders = &TokenError{Reason: ReasonMalformed, Msg: "more than one Authorization header"}
	errEmptyToken  = &TokenError{Reason: ReasonMalformed, Msg: "Authorization header: no token after Bearer"}
	errOversized   = &TokenError{Reason: ReasonOversized,
		Msg: fmt.Sprintf("Authorization header over %d bytes", MaxHeaderBytes)}
	errTokenOversized = &TokenError{Reason: ReasonOversized,
		Msg: fmt.Sprintf("token over %d bytes", MaxHeaderBytes)}
	errTokenChars = &TokenError{Reason: ReasonMalformed,
		Msg: "token holds a character a token cannot have (whitespace, a control character such as NUL, or another outside RFC 6750's token68)"}
)

// BearerToken returns the token of a request's Authorization header
// values (http.Header's slice for the key, nil when absent).
func BearerToken(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", errNoHeader
	case 1:
	default:
		return "", errManyHeaders
	}
	v := values[0]
	if len(v) > MaxHeaderBytes {
		return "", errOversized
	}
	if strings.TrimSpace(v) == "" {
		return "", errNoHeader
	}
	const scheme = "bearer"
	if len(v) < len(scheme) || !strings.EqualFold(v[:len(scheme)], scheme) {
		return "", errBadScheme
	}
	rest := v[len(scheme):]
	if rest == "" {
		return "", errEmptyToken
	}
	if rest[0] != ' ' {
		return "", errBadScheme // "Bearerx ...": another scheme
	}
	token := strings.TrimLeft(rest, " ")
	if token == "" {
		return "", errEmptyToken
	}
	if err := CheckToken(token); err != nil {
		return "", err
	}
	return token, nil
}

// CheckToken checks that token could be a token at all: 1..MaxHeaderBytes
// bytes of RFC 6750's token68 characters (letters, digits, - . _ ~ + /,
// then = padding). A token with whitespace or a NUL never reaches the
// digest.
func CheckToken(token string) error {
	if token == "" {
		return errNoToken
	}
	if len(token) > MaxHeaderBytes {
		return errTokenOversized
	}
	i := 0
	for ; i < len(token) && token68(token[i]); i++ {
	}
	for ; i < len(token) && token[i] == '='; i++ {
	}
	if i != len(token) || token[0] == '=' {
		return errTokenChars
	}
	return nil
}

func token68(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}
