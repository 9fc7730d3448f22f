"""MPP's `WWW-Authenticate` field for the differential test: a writer, which the generator uses to put a challenge list
into header values of many forms, and a reader, which peer.py uses on the reference's side. Stdlib only.

The reference (integraledger-terms 0.4.0) takes the JSON challenge list and has no header reader of its own (the
vector files cite @integraledger/lcp's parseChallenges, which is not a Python package). So the reader here is the
reference side's reading, written from RFC 9110's grammar (section 11.6.1, with section 5.6's list and quoted-string
rules) and the caps the vector file mpp-challenge.json records for the protocol package (its agreedRefusals): a value
over 8192 UTF-16 code units, one not following the grammar, or over 32 `Payment` challenges is mpp/header-malformed;
a `Payment` challenge repeating a parameter name (any name, MPP's or not, compared case-insensitively: the agreed row
says "a duplicate parameter", and RFC 9110 section 11.2 allows each name once per challenge), or without a non-empty
id, realm, method, intent or request, is mpp/challenge-malformed. Optional whitespace (OWS, BWS) is spaces and tabs;
the `1*SP` after a scheme that has a token68 or parameters is spaces alone. The crate's reader is
terms::mpp::decode_challenges; the two are compared case by case."""

import re

MAX_FIELD = 8192
MAX_CHALLENGES = 32
PARAMS = ("id", "realm", "method", "intent", "request", "expires", "digest", "description", "header", "opaque")
REQUIRED = ("id", "realm", "method", "intent", "request")

_TCHAR = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


class Refused(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def _utf16_length(text):
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


def _qdtext(c):
    """A character a quoted-string holds as itself: HTAB, SP, visible ASCII but `"` and `\\`, obs-text (Latin-1)."""
    o = ord(c)
    return c in "\t " or o == 0x21 or 0x23 <= o <= 0x5B or 0x5D <= o <= 0x7E or 0x80 <= o <= 0xFF


def _escapable(c):
    """A character a quoted-pair may escape: HTAB, SP, VCHAR, obs-text."""
    o = ord(c)
    return c in "\t " or 0x21 <= o <= 0x7E or 0x80 <= o <= 0xFF


def _elements(value):
    """The list elements of one field value (RFC 9110 5.6.1), split at the commas outside quoted-strings; each element
    is a list of pieces, a piece being ("text", s) or ("quoted", unescaped). Any quoted-string fault raises."""
    elements, pieces, text = [], [], []
    i, n = 0, len(value)
    while i < n:
        c = value[i]
        if c == '"':
            if text:
                pieces.append(("text", "".join(text)))
                text = []
            i += 1
            out = []
            while True:
                if i >= n:
                    raise Refused("mpp/header-malformed")
                c = value[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\":
                    if i + 1 >= n:
                        raise Refused("mpp/header-malformed")
                    if not _escapable(value[i + 1]):
                        raise Refused("mpp/header-malformed")
                    out.append(value[i + 1])
                    i += 2
                    continue
                if not _qdtext(c):
                    raise Refused("mpp/header-malformed")
                out.append(c)
                i += 1
            pieces.append(("quoted", "".join(out)))
            continue
        if c == ",":
            if text:
                pieces.append(("text", "".join(text)))
                text = []
            elements.append(pieces)
            pieces = []
            i += 1
            continue
        text.append(c)
        i += 1
    if text:
        pieces.append(("text", "".join(text)))
    elements.append(pieces)
    return elements


def _strip(pieces):
    """An element without its surrounding OWS (SP and HTAB)."""
    pieces = list(pieces)
    if pieces and pieces[0][0] == "text":
        pieces[0] = ("text", pieces[0][1].lstrip(" \t"))
        if not pieces[0][1]:
            pieces.pop(0)
    if pieces and pieces[-1][0] == "text":
        pieces[-1] = ("text", pieces[-1][1].rstrip(" \t"))
        if not pieces[-1][1]:
            pieces.pop()
    return pieces


def _auth_param(pieces):
    """(name, value) when the pieces are exactly `token BWS "=" BWS ( token / quoted-string )`, else None."""
    if not pieces or pieces[0][0] != "text":
        return None
    head = pieces[0][1]
    m = re.fullmatch(r"([!#$%&'*+\-.^_`|~0-9A-Za-z]+)[ \t]*=[ \t]*(.*)", head, re.DOTALL)
    if m is None:
        return None
    name, rest = m.group(1), m.group(2)
    if len(pieces) == 1:
        return (name, rest) if _TOKEN.fullmatch(rest) else None
    if rest == "" and len(pieces) == 2 and pieces[1][0] == "quoted":
        return name, pieces[1][1]
    return None


def _challenges(value):
    """The challenges of one field value: (scheme, [(name, value)], token68 or None) each, in order."""
    out = []
    for element in _elements(value):
        pieces = _strip(element)
        if not pieces:
            continue  # an empty list element
        param = _auth_param(pieces)
        if param is not None:
            if not out or out[-1][2] is not None:
                raise Refused("mpp/header-malformed")
            out[-1][1].append(param)
            continue
        if pieces[0][0] != "text":
            raise Refused("mpp/header-malformed")
        m = re.fullmatch(r"([!#$%&'*+\-.^_`|~0-9A-Za-z]+)( +(.*))?", pieces[0][1], re.DOTALL)
        if m is None:
            raise Refused("mpp/header-malformed")
        scheme, rest = m.group(1), m.group(3)
        if rest is None or rest == "":
            if len(pieces) > 1:
                raise Refused("mpp/header-malformed")
            out.append((scheme, [], None))
            continue
        tail = [("text", rest)] + pieces[1:]
        param = _auth_param(tail)
        if param is not None:
            out.append((scheme, [param], None))
        elif len(tail) == 1 and _TOKEN68.fullmatch(rest):
            out.append((scheme, [], rest))
        else:
            raise Refused("mpp/header-malformed")
    return out


def read_challenges(values):
    """The JSON challenge list of `WWW-Authenticate` field values: the `Payment` challenges (the scheme in any case),
    each an object of MPP's parameters that it carries (names lower-cased, others dropped) in the order written.
    Raises Refused with the refusal code."""
    out = []
    for value in values:
        if _utf16_length(value) > MAX_FIELD:
            raise Refused("mpp/header-malformed")
        for scheme, params, _token68 in _challenges(value):
            if scheme.lower() != "payment":
                continue
            kept, seen = {}, set()
            for name, v in params:
                name = name.lower()
                if name in seen:
                    raise Refused("mpp/challenge-malformed")
                seen.add(name)
                if name in PARAMS:
                    kept[name] = v
            if any(kept.get(k, "") == "" for k in REQUIRED):
                raise Refused("mpp/challenge-malformed")
            out.append(kept)
            if len(out) > MAX_CHALLENGES:
                raise Refused("mpp/header-malformed")
    return out


# --- the writer (the generator's side) -------------------------------------------------------------------------------


def quoted(value, rng=None, escape_some=False):
    """value as a quoted-string: `"` and `\\` escaped, and with escape_some a few other characters too."""
    out = []
    for c in value:
        if c in '"\\':
            out.append("\\" + c)
        elif escape_some and rng is not None and _escapable(c) and rng.random() < 0.15:
            out.append("\\" + c)
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def param_text(rng, name, value, style):
    """One auth-param: the name in some case, BWS around `=`, the value as a token where it is one and the style
    asks, else a quoted-string."""
    case = style.get("case", "lower")
    if case == "upper":
        name = name.upper()
    elif case == "mixed":
        name = "".join(c.upper() if rng.random() < 0.5 else c for c in name)
    eq = rng.choice(style.get("eq", ["="]))
    token = style.get("token", "never")
    as_token = value != "" and _TOKEN.fullmatch(value) is not None and (
        token == "always" or (token == "some" and rng.random() < 0.5))
    return name + eq + (value if as_token else quoted(value, rng, style.get("escape", False)))


OTHER_SCHEMES = [
    'Bearer realm="example"', "Basic", 'Basic realm="x", charset="UTF-8"', "Negotiate abc123==", "Bearer abc.def-_~+/==",
    'Newauth realm="apps", type=1, title="Login to \\"apps\\""', "Digest nonce=abc, qop=auth", "NTLM",
    'Bearer error="invalid_token", error_description="expired, try again"',
]


def challenge_text(rng, c, style):
    """One Payment challenge: the scheme, one space or more, its parameters separated by commas."""
    scheme = style.get("scheme", "Payment")
    params = [param_text(rng, k, v, style) for k, v in c.items()]
    if style.get("unknown"):
        params.insert(rng.randrange(len(params) + 1), rng.choice(['x-note="a, b"', "charset=UTF-8", 'ext=""']))
    sep = style.get("sep", ", ")
    return scheme + " " * style.get("spaces", 1) + sep.join(params)


def write_headers(rng, challenges, style):
    """The challenge list as `WWW-Authenticate` field values in the style: one value each, all in one value, or in
    groups, with other schemes beside them where the style asks."""
    texts = [challenge_text(rng, c, style) for c in challenges]
    if style.get("others"):
        for _ in range(rng.choice([1, 2, 3])):
            texts.insert(rng.randrange(len(texts) + 1), rng.choice(OTHER_SCHEMES))
    layout = style.get("layout", "each")
    sep = style.get("join", ", ")
    if layout == "each":
        return texts
    if layout == "one":
        return [sep.join(texts)]
    values, current = [], []
    for t in texts:
        current.append(t)
        if rng.random() < 0.5:
            values.append(sep.join(current))
            current = []
    if current:
        values.append(sep.join(current))
    return values
