//! Refusals: a pairing's own reason, `<namespace>/<reason>`, that the gate turns into a decline. A reason is a
//! [`Reason`] value, and the gate decides on that value, never on the code's text.

use std::fmt;

/// Writes the reasons once: the enum, each reason's kebab string, and (for the tests) the list of them all.
macro_rules! reasons {
    ($($(#[doc = $doc:literal])+ $variant:ident => $text:literal,)+) => {
        /// Why a pairing (or the gate, for a pairing) refuses: the `<reason>` of a refusal's code
        /// `<namespace>/<reason>`. [`Reason::as_str`] writes it as the reference does, e.g. `not-v2`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Reason {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl Reason {
            /// Every reason, in the order they are written.
            #[cfg(test)]
            pub(crate) const ALL: &'static [Self] = &[$(Self::$variant,)+];

            /// The reason as the reference writes it, e.g. `no-payable-option`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)+
                }
            }
        }
    };
}

reasons! {
    /// The document is not an x402 version 2 document.
    NotV2 => "not-v2",
    /// An option the pairing carries cannot be read or paid as it is written.
    OptionMalformed => "option-malformed",
    /// No option the account can pay.
    NoPayableOption => "no-payable-option",
    /// The chosen option is not one the document offers.
    OptionNotInDocument => "option-not-in-document",
    /// The chosen option is another pairing's.
    OptionNotThisPairing => "option-not-this-pairing",
    /// The buyer's choice cannot be read.
    ChoiceMalformed => "choice-malformed",
    /// A buyer input the build needs is missing or not of its form.
    InputMissing => "input-missing",
    /// A value the buyer handed back is not of its form.
    InputMalformed => "input-malformed",
    /// The document carries no legal context.
    NoLegalContext => "no-legal-context",
    /// The legal context cannot be read.
    LegalContextMalformed => "legal-context-malformed",
    /// The legal context advertises another H than the one the payment is built with.
    LegalContextConflict => "legal-context-conflict",
    /// The link is of another scheme than https.
    LinkNotHttps => "link-not-https",
    /// The payment's payload cannot be read.
    PayloadMalformed => "payload-malformed",
    /// A signature is not of its form.
    SignatureMalformed => "signature-malformed",
    /// The signed nonce is not of its form.
    NonceMalformed => "nonce-malformed",
    /// The signed nonce is not the one the payment's terms give.
    NonceNotPayment => "nonce-not-payment",
    /// The salt is not of its form.
    SaltMalformed => "salt-malformed",
    /// The salt is not bound to the payment.
    SaltNotBound => "salt-not-bound",
    /// The Permit2 spender is not the pairing's proxy.
    SpenderNotProxy => "spender-not-proxy",
    /// The delegation's permission context cannot be decoded.
    PermissionContextMalformed => "permission-context-malformed",
    /// The delegation manager is not the reference deployment on the option's chain.
    ManagerNotReference => "manager-not-reference",
    /// The permission context holds no delegation.
    DelegationEmpty => "delegation-empty",
    /// The option names no facilitator address.
    FacilitatorMissing => "facilitator-missing",
    /// The option's escrow is not the canonical deployment.
    EscrowNotCanonical => "escrow-not-canonical",
    /// The option asks for a flow the pairing does not carry.
    FlowNotCarried => "flow-not-carried",
    /// The payment identifier cannot be written into the payment.
    PaymentIdentifierUnwritable => "payment-identifier-unwritable",
    /// The deposit is above the option's maximum.
    DepositAboveMax => "deposit-above-max",
    /// The deposit carries no single authorization the contract takes.
    DepositAuthorization => "deposit-authorization",
    /// The payment does not open a channel.
    NotAnOpening => "not-an-opening",
    /// The payment is of no channel kind the pairing knows.
    ChannelKindUnknown => "channel-kind-unknown",
    /// The channel configuration does not hash to the channel id the payment names.
    ChannelIdMismatch => "channel-id-mismatch",
    /// The network is not one the rail reads.
    NetworkMalformed => "network-malformed",
    /// A field is not of the form the rail reads.
    FieldMalformed => "field-malformed",
    /// The pairing has nothing for the buyer to sign.
    NothingToSign => "nothing-to-sign",
    /// The pairing's payment has no signed place for H: nothing for the buyer to sign.
    NoSignedPlace => "no-signed-place",
    /// The pairing's in-channel payments carry no H (they sign the channel, which the opening bound).
    NotBoundWithin => "not-bound-within",
    /// The pairing's build panicked.
    BuildFailed => "build-failed",
    /// A pairing or channel member panicked.
    MemberFailed => "member-failed",
    /// The pairing's read-back of H panicked.
    BoundFailed => "bound-failed",
    /// MPP: a `WWW-Authenticate` value is over 8 KiB, does not follow RFC 9110's challenge grammar, or holds
    /// more than 32 `Payment` challenges.
    HeaderMalformed => "header-malformed",
    /// MPP: a challenge is not of MPP's shape (a parameter repeated, missing or empty; a member not a string), or
    /// an H or position given to derive an id is not of its form.
    ChallengeMalformed => "challenge-malformed",
    /// MPP: the challenge id does not carry an H in the form its intent and method take (`base64url(H).position`).
    IdNotOurs => "id-not-ours",
    /// MPP: the challenge's `request` is not base64url of a JSON object within its bounds, or a member the method
    /// reads is not of its form.
    RequestMalformed => "request-malformed",
    /// MPP: the challenge's `request` is not base64url of its RFC 8785 form, where the pairing hashes it as received.
    RequestNotJcs => "request-not-jcs",
    /// MPP: the challenge's `opaque` is not base64url of a flat map of strings.
    OpaqueMalformed => "opaque-malformed",
    /// MPP: the echoed challenge's `opaque` names no H, or another H than its id.
    OpaqueNotThisHash => "opaque-not-this-hash",
    /// MPP: a member the pairing writes H into is already the seller's, as issued.
    CarrierTaken => "carrier-taken",
    /// MPP: the method's reference field already holds another value.
    CarrierOccupied => "carrier-occupied",
    /// MPP: the method's carrier of H does not name this challenge.
    CarrierNotChallenge => "carrier-not-challenge",
    /// MPP: the challenge carries no `expires` the pairing needs, or one that is not an RFC 3339 date-time.
    ExpiresRequired => "expires-required",
    /// MPP (ours, not the reference's): every challenge that offers the pairing has expired by the gate's clock.
    ChallengeExpired => "challenge-expired",
    /// MPP: the challenge is of another intent, method or credential type than the pairing's.
    NotThisPairing => "not-this-pairing",
    /// MPP: the challenge's method names no network.
    NetworkUnnamed => "network-unnamed",
    /// A Solana challenge names a network with no CAIP-2 id (localnet).
    NetworkUndeclared => "network-undeclared",
    /// An XRP Ledger challenge names no network.
    NetworkMissing => "network-missing",
    /// A Hedera challenge's chain id is not one Hedera names (295, 296).
    ChainIdUnnamed => "chain-id-unnamed",
    /// MPP: a session or subscription challenge's `chainId` is absent or not a positive safe integer.
    ChainIdRequired => "chain-id-required",
    /// MPP: a session challenge's escrow contract is not an address.
    EscrowMalformed => "escrow-malformed",
    /// MPP: a Tempo session's `sessionProtocol` is not `v1` or `v2`.
    SessionProtocol => "session-protocol",
    /// MPP: a session credential's action is not one the pairing takes.
    SessionAction => "session-action",
    /// MPP: a session challenge already names a channel (it resumes one, it does not open one).
    ChannelNamed => "channel-named",
    /// MPP: the session's channel does not commit to H.
    ChannelNotBound => "channel-not-bound",
    /// MPP: the credential is not of MPP's shape or bounds (64 KiB, 16 levels), or a signer's answer is not of its
    /// form.
    CredentialMalformed => "credential-malformed",
    /// MPP: the credential's payload type is not the pairing's.
    CredentialType => "credential-type",
    /// MPP: the challenge's `credentialTypes` is empty, or names a type the method does not define.
    CredentialTypes => "credential-types",
    /// MPP: the challenge's `splits` are not of their form.
    SplitsMalformed => "splits-malformed",
    /// MPP: a Tempo charge leaves no mode the pairing pays in.
    ModesPullOnly => "modes-pull-only",
    /// MPP: a Stripe `metadata` map is not within Stripe's bounds.
    MetadataMalformed => "metadata-malformed",
    /// MPP: a `usdc` challenge does not name exactly one profile with its details.
    UsdcProfile => "usdc-profile",
    /// MPP: a Tempo subscription's access key is not of its form.
    AccessKeyMalformed => "access-key-malformed",
    /// MPP: an attribution memo is not 32 bytes of hex.
    AttributionMalformed => "attribution-malformed",
    /// MPP: an attribution memo is not this realm's and challenge's.
    AttributionMismatch => "attribution-mismatch",
    /// MPP: the signed EIP-3009 nonce is not the challenge hash.
    NonceNotChallengeHash => "nonce-not-challenge-hash",
    /// MPP: a session voucher signs another channel.
    NonceNotChannel => "nonce-not-channel",
    /// MPP: the signed nonce is not the `usdc` derivation of the challenge.
    NonceNotUsdcDerivation => "nonce-not-usdc-derivation",
    /// MPP: the session channel's salt is not H.
    SaltNotThisHash => "salt-not-this-hash",
    /// MPP: the Gateway burn intent's salt is not the `usdc` derivation of the challenge.
    SaltNotUsdcDerivation => "salt-not-usdc-derivation",
    /// MPP: the Permit2 witness is not the challenge hash.
    WitnessNotChallengeHash => "witness-not-challenge-hash",
    /// MPP: the Circle Gateway burn intent cannot be read.
    GatewayUnread => "gateway-unread",
    /// MPP: the credential names no `source` where the pairing needs one.
    SourceRequired => "source-required",
    /// MPP: the Stacks transfer's memo is not H.
    StacksMemoNotH => "stacks-memo-not-h",
    /// MPP: the Stacks transaction cannot be read.
    StacksTxMalformed => "stacks-tx-malformed",
    /// MPP: the in-session action is not one the pairing builds.
    WithinActionNotBuilt => "within-action-not-built",
    /// NEAR Intents: the credential is not a push credential of type `hash`, the one the pairing reads H beside.
    NotHashCredential => "not-hash-credential",
    /// NEAR Intents: the echoed request's `externalId` is not an LCP string (`lcp:sha256:0x` and 64 hex digits).
    MemoNotLcp => "memo-not-lcp",
    /// Policy (ours): the resource bought is not one the policy allows, or the payment names none.
    ResourceNotAllowed => "resource-not-allowed",
    /// Policy (ours): the network is not one the policy allows.
    NetworkNotAllowed => "network-not-allowed",
    /// Policy (ours): the asset is not one the policy lists.
    AssetNotAllowed => "asset-not-allowed",
    /// Policy (ours): the payee is denied, not allowed, or not an address.
    PayeeNotAllowed => "payee-not-allowed",
    /// Policy (ours): the amount is above the per-payment cap for its asset.
    AmountAboveCap => "amount-above-cap",
    /// Policy (ours): a budget window has no room for the amount.
    BudgetExhausted => "budget-exhausted",
    /// Policy (ours): the signed authorisation would be valid for longer than the policy's maximum.
    WindowTooLong => "window-too-long",
    /// Policy (ours): the pairing gives no quote of the payment, so the policy cannot place it.
    QuoteUnknown => "quote-unknown",
    /// Policy (ours): the approval passed back is not the payment the gate would make now.
    ApprovalChanged => "approval-changed",
    /// Policy (ours): the payment is above the approval threshold and the call cannot hand it back for approval.
    ApprovalRequired => "approval-required",
    /// Policy (ours): the seller is not proven (no verified attestation, or one below the policy's minimums), and
    /// the policy refuses unproven sellers (`unproven = "refuse"`).
    SellerUnproven => "seller-unproven",
    /// Policy (ours): the seller is not proven and the amount is above the asset's probation cap (`unproven =
    /// "probation"`); within the asset's cap, so a proven seller would be paid it.
    ProbationCap => "probation-cap",
    /// Policy (ours): the seller's discovery document says it requires signed acceptance of its terms
    /// (`acceptanceRequired: true`), and the policy refuses such a seller (`acceptance_required = "refuse"`).
    AcceptanceRequired => "acceptance-required",
    /// Policy (ours): a person denied the payment of this purchase in the approval queue
    /// ([`ApprovalQueue`](crate::safety::ApprovalQueue)); every later send of the purchase declines so.
    ApprovalDenied => "approval-denied",
    /// Journal (ours): the journal cannot be read or written.
    Unavailable => "unavailable",
    /// Journal (ours): a payment for the same purchase is being signed by another attempt.
    InFlight => "in-flight",
    /// Journal (ours): a payment for the same purchase may have moved and nothing can be re-sent: ask first.
    StateUnknown => "state-unknown",
    /// Journal (ours): the purchase's key was used before for another request (another method, URL or body): its
    /// earlier payment stands, and nothing is paid for this request under that key.
    KeyReused => "key-reused",
    /// Journal (ours): another purchase of the same payer, through a pairing whose authorization's nonce is H, was
    /// paid under the same H (a seller serving one static ATR): a token settles a nonce once per payer, so this
    /// payment could never settle, and nothing is signed.
    NonceUsed => "nonce-used",
    /// Client (ours): a 402 that carries no offer the client reads (no `PAYMENT-REQUIRED`, no `Payment` challenge).
    NoOffer => "no-offer",
    /// An amount is not a decimal string below 2^256.
    AmountMalformed => "amount-malformed",
    /// A signed transaction is for another chain than the payment's.
    ChainMismatch => "chain-mismatch",
    /// A signed transaction has another nonce than the buyer named.
    NonceMismatch => "nonce-mismatch",
    /// A signed transaction calls another contract, with other calldata, or moves value.
    CallMismatch => "call-mismatch",
    /// Solana: bytes that are not exactly one well-formed wire transaction.
    TxMalformed => "tx-malformed",
    /// Solana: a wire transaction over 1,232 bytes.
    TxTooLarge => "tx-too-large",
    /// Solana: no bump gives a program-derived address off the curve, or the seeds are too many or too long.
    PdaNotFound => "pda-not-found",
    /// Tempo: no `transferWithMemo` call or log carries this challenge's attribution memo.
    MemoNotBound => "memo-not-bound",
    /// Tempo: more than one `transferWithMemo` call or log carries this challenge's attribution memo.
    Ambiguous => "ambiguous",
    /// Solana: a transaction with no top-level Memo instruction, or with two or more.
    MemoCount => "memo-count",
    /// Solana: the transaction holds no top-level payment-channels instruction.
    NoChannelInstruction => "no-channel-instruction",
    /// Solana: the transaction holds two or more payment-channels instructions, or one of no known form.
    ChannelInstruction => "channel-instruction",
    /// Solana: a Memo instruction's data is not UTF-8.
    MemoNotUtf8 => "memo-not-utf8",
    /// Solana: the memo names H in another spelling than its LCP string in lower-case hex.
    CarrierNotCanonical => "carrier-not-canonical",
    /// Solana: the memo is not the option's `extra.memo` (or the option's memo is not H's LCP string).
    CarrierMismatch => "carrier-mismatch",
    /// Solana: no Memo instruction of the transaction holds an LCP string (MPP's Solana charge).
    NoCarrier => "no-carrier",
    /// XRPL: a signed blob that is not hex, does not decode in its canonical form within the caps, or lacks its
    /// transaction type or account.
    BlobMalformed => "blob-malformed",
    /// XRPL: a signed blob over 4096 hex digits.
    BlobTooLarge => "blob-too-large",
    /// XRPL: a multi-signed blob (the payer signs with a single key).
    Multisigned => "multisigned",
    /// XRPL: the blob's `NetworkID` is not what a node of the payment's network takes.
    NetworkMismatch => "network-mismatch",
    /// XRPL: the signed transaction is not a Payment.
    NotPayment => "not-payment",
    /// XRPL: the signed Payment carries no `InvoiceID`.
    NoInvoiceId => "no-invoice-id",
    /// XRPL: the option's `extra.invoiceId` is not an LCP string.
    CarrierNotLcp => "carrier-not-lcp",
    /// XRPL: an MPP XRPL request carries `methodDetails.memos`, which the build does not write.
    MemosNotCarried => "memos-not-carried",
    /// XRPL: an MPP XRPL session request whose `currency` is not `XRP` (a channel holds XRP only).
    CurrencyNotXrp => "currency-not-xrp",
    /// XRPL: a session's opening is not a PaymentChannelCreate, or lacks the source, destination or sequence its
    /// channel id is made from.
    NotChannelCreate => "not-channel-create",
    /// XRPL: a session's opening carries no memo holding an LCP string.
    NoMemo => "no-memo",
    /// XRPL (ours): a session claim above the drops the channel's opening deposits, which the ledger would not pay.
    ClaimAboveDeposit => "claim-above-deposit",
    /// XRPL (ours): the signed transaction is not the one built (another destination, amount, fee, sequence, last
    /// ledger, memo or field), or a presented one pays another destination or amount than its option.
    TxMismatch => "tx-mismatch",
    /// Solana: a credential of type `bundle` holds no transaction.
    BundleEmpty => "bundle-empty",
    /// Solana: a durable-nonce message names its nonce account through an address lookup table.
    NonceAccountNotStatic => "nonce-account-not-static",
    /// Tempo: the payment's H is read from its landed receipt, and none was read beside it.
    ReadFirst => "read-first",
    /// Tempo: a key authorization that is not written or read (its form, its caps, its 8192 bytes).
    KeyAuthorizationMalformed => "key-authorization-malformed",
    /// Tempo: a key authorization with no witness.
    NoWitness => "no-witness",
    /// Tempo: a key authorization whose witness is not this challenge's H.
    WitnessNotBound => "witness-not-bound",
    /// Tempo: a key authorization for another key id, key type or chain than the challenge's access key.
    KeyNotAuthorized => "key-not-authorized",
    /// Tempo: the session opening's transaction holds no `open` call of the challenge's escrow version to its escrow.
    OpenNotFound => "open-not-found",
    /// Tempo: the session opening's transaction holds more than one `open` call to the escrow.
    OpenAmbiguous => "open-ambiguous",
    /// Tempo: a v2 session payment's `descriptor` does not give its channel id, or names another party, hash or
    /// operator than the opening transaction and the challenge.
    DescriptorMismatch => "descriptor-mismatch",
    /// Solana session: the opening's `channelId` is not a key, or not the channel its `open` instruction opens.
    ChannelMismatch => "channel-mismatch",
    /// Solana session: a bearer proof (`authentication`) that names another challenge than the one echoed.
    ProofNotChallenge => "proof-not-challenge",
    /// Solana session: an operator-mode opening whose challenge names no operator key, or whose `open` authorizes
    /// another signer than that operator.
    SignerNotOperator => "signer-not-operator",
    /// Lightning: the invoice is not a BOLT11 invoice the reader takes (Bech32, its checksum, its prefix, its fields).
    InvoiceMalformed => "invoice-malformed",
    /// Lightning: the invoice is over 8 KiB, or has more than 64 tagged fields.
    InvoiceTooLarge => "invoice-too-large",
    /// Lightning: the invoice has no `h` (description hash) field.
    NoDescriptionHash => "no-description-hash",
    /// Lightning: the invoice has no `m` (payment metadata) field, or one that is not H.
    NoMetadata => "no-metadata",
    /// Lightning: the invoice repeats the `h` or `m` field.
    FieldRepeated => "field-repeated",
    /// Lightning: the invoice's `h` or `m` field is not 32 bytes.
    FieldLength => "field-length",
    /// Lightning: the invoice's currency is not the option's (or the challenge's) network's.
    CurrencyNetwork => "currency-network",
    /// Lightning: the request hash is not the buyer's own request's, or not the invoice's description hash.
    RequestHashMismatch => "request-hash-mismatch",
    /// Lightning: the option's request binding, or the buyer's request, is not of its form.
    RequestBindingMalformed => "request-binding-malformed",
    /// Lightning: the buyer's HTTP request is for another URL than the document's resource.
    RequestResourceMismatch => "request-resource-mismatch",
    /// Lightning: the buyer's MCP request is to another server than the option binds.
    RequestServerMismatch => "request-server-mismatch",
    /// Lightning: the option's binding profile is not the buyer's request's transport.
    RequestProfileMismatch => "request-profile-mismatch",
    /// Lightning: the ATR's own `x402` slot does not name the invoice.
    InvoiceNotNamed => "invoice-not-named",
    /// Lightning: the node's answer is not a preimage of 64 lower-case hex digits.
    PreimageMalformed => "preimage-malformed",
    /// Lightning: the MPP request carries no payment hash of 64 lower-case hex digits.
    PaymentHashRequired => "payment-hash-required",
    /// Lightning: the MPP request carries a description.
    DescriptionPresent => "description-present",
    /// Lightning: the invoice carries an inline description (`d`).
    DescriptionInline => "description-inline",
    /// Lightning: the invoice's payment hash is not the request's.
    PaymentHashMismatch => "payment-hash-mismatch",
    /// Lightning: the challenge expires after the invoice does.
    ExpiresAfterInvoice => "expires-after-invoice",
    /// Lightning: the session's return invoice is not a BOLT11 invoice without an amount.
    ReturnInvoiceMalformed => "return-invoice-malformed",
    /// Lightning: the session credential's action is not the opening, the one payment the gate reads.
    NoPaymentInAction => "no-payment-in-action",
    /// Policy: the quote names no amount (a card or checkout charge), and the policy refuses an unknown amount.
    AmountUnknown => "amount-unknown",
    /// Card: a value over the pairing's size, count or nesting bounds.
    TooLarge => "too-large",
    /// Card: TAP's `Signature-Input` is not an RFC 9651 Dictionary of Inner Lists of Strings with plain parameters.
    TapSignatureInputMalformed => "tap-signature-input-malformed",
    /// Card: TAP's `Signature` is not an RFC 9651 Dictionary of Byte Sequences.
    TapSignatureMalformed => "tap-signature-malformed",
    /// Card: no TAP signature is tagged `agent-payer-auth`.
    TapNoPayerSignature => "tap-no-payer-signature",
    /// Card: an `agent-payer-auth` signature does not list the `lcp-hash` component.
    TapHashNotCovered => "tap-hash-not-covered",
    /// Card: no `agent-payer-auth` signature has its `Signature` member.
    TapSignatureMissing => "tap-signature-missing",
    /// Card: the `lcp-hash` field lines are not strings, or the one line is not a hash.
    TapFieldMalformed => "tap-field-malformed",
    /// Card: the request carries no `lcp-hash` field line.
    TapFieldMissing => "tap-field-missing",
    /// Card: the request carries more than one `lcp-hash` field line.
    TapFieldRepeated => "tap-field-repeated",
    /// Card: a Verifiable Intent layer or checkout JWT is not of its form.
    ViMalformed => "vi-malformed",
    /// Card: a Verifiable Intent layer's header is not ES256 of the layer's `typ` (or lacks the agent's `kid`).
    ViTyp => "vi-typ",
    /// Card: the layer references no single `mandate.checkout.1`.
    ViNoCheckoutMandate => "vi-no-checkout-mandate",
    /// Card: the checkout mandate's `checkout_hash` is not its checkout JWT's digest.
    ViCheckoutHashMismatch => "vi-checkout-hash-mismatch",
    /// Card: a payment mandate's `transaction_id` is not the checkout JWT's digest.
    ViTransactionIdMismatch => "vi-transaction-id-mismatch",
    /// Card: the checkout JWT advertises another H than the one the mandate is built with.
    ViLegalContextConflict => "vi-legal-context-conflict",
    /// Card: a delegated or confirmation key is not an EC P-256 JWK of 32-byte coordinates on the curve.
    ViKeyMalformed => "vi-key-malformed",
    /// Card: a layer's ES256 signature does not verify under the key that delegates it.
    ViSignatureInvalid => "vi-signature-invalid",
    /// Card: the agent layer's `kid` is not the key the user's layer delegates.
    ViKidMismatch => "vi-kid-mismatch",
    /// Card: a layer's `sd_hash` is not the digest of the layer below it.
    ViSdHashMismatch => "vi-sd-hash-mismatch",
    /// Card: a disclosure no signed digest references.
    ViDisclosureUnreferenced => "vi-disclosure-unreferenced",
    /// Checkout: the ACP checkout session is not a JSON object of its form.
    SessionMalformed => "session-malformed",
    /// Checkout: the ACP session's `id` (or the allowance's `checkout_session_id`) is not H.
    IdNotHash => "id-not-hash",
    /// Checkout: the ATR's hash is not the ACP session's `id`.
    HashNotSession => "hash-not-session",
    /// Checkout: the agent answered another allowance than the one built.
    AllowanceChanged => "allowance-changed",
    /// Checkout: the ACP allowance is not ACP's six members of their forms.
    AllowanceMalformed => "allowance-malformed",
    /// Checkout: the buyer signed nothing the payment carries.
    NotBuyerSigned => "not-buyer-signed",
    /// Checkout: the ACK Payment Request token or its body is not of its form.
    TokenMalformed => "token-malformed",
    /// Checkout: the ACK Payment Request's `id` is not H in LCP's string form.
    IdNotLcp => "id-not-lcp",
    /// Checkout: the UCP checkout is not a JSON object of its form.
    CheckoutMalformed => "checkout-malformed",
    /// Checkout: the UCP checkout carries no AP2 merchant authorization.
    Ap2NotActive => "ap2-not-active",
    /// Checkout: the checkout's legal context carries another H than the ATR's.
    HashNotInCheckout => "hash-not-in-checkout",
    /// Checkout: a compact JWS is not three canonical base64url segments with a JSON object payload.
    JwsMalformed => "jws-malformed",
    /// Checkout: an AP2 mandate presentation is not of its form.
    MandateMalformed => "mandate-malformed",
    /// Checkout: an SD-JWT names an `_sd_alg` other than `sha-256`.
    SdAlgUnsupported => "sd-alg-unsupported",
    /// Checkout: an SD-JWT disclosure no digest references.
    DisclosureUnreferenced => "disclosure-unreferenced",
    /// Checkout: the checkout JWT's payload names no checkout `id`.
    CheckoutIdMissing => "checkout-id-missing",
    /// Checkout: the mandate holds no `mandate.checkout.1` object.
    NoCheckoutMandate => "no-checkout-mandate",
    /// Checkout: the mandate holds more than one `mandate.checkout.1` object.
    MandateAmbiguous => "mandate-ambiguous",
    /// Checkout: the mandate's `checkout_hash` is not the presented checkout JWT's digest.
    CheckoutNotLatest => "checkout-not-latest",
    /// Checkout: the checkout JWT the mandate discloses is not the one presented.
    CheckoutHashMismatch => "checkout-hash-mismatch",
    /// Stellar: the operation is not one `transfer(from, to, amount)`, or the payer's entry does not sign exactly it.
    NotOneTransfer => "not-one-transfer",
    /// Stellar: no single address-credential authorization entry of the transfer's `from`.
    NoAddressAuth => "no-address-auth",
    /// Stellar: the transfer calls another token contract than the option's asset.
    AssetMismatch => "asset-mismatch",
    /// Stellar: the transfer's amount is not the option's.
    AmountMismatch => "amount-mismatch",
    /// Stellar: the transfer's `from` is not the choice's payer.
    PayerMismatch => "payer-mismatch",
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A pairing's refusal, e.g. `x402/no-payable-option`: a namespace (none for the gate's bare `bound-failed` and
/// `member-failed`) and a [`Reason`]. It is its own type, never a JSON shape, so a seller or signer value that looks
/// like `{"refused": true, ...}` can never be mistaken for one.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Refusal {
    namespace: Option<&'static str>,
    reason: Reason,
}

impl Refusal {
    /// A refusal in a namespace, e.g. `Refusal::new("mpp", Reason::InputMissing)` for `mpp/input-missing`.
    pub const fn new(namespace: &'static str, reason: Reason) -> Self {
        Self { namespace: Some(namespace), reason }
    }

    /// A refusal in the `x402` namespace, e.g. `x402/not-v2`.
    pub const fn x402(reason: Reason) -> Self {
        Self::new("x402", reason)
    }

    /// A refusal in the `mpp` namespace, e.g. `mpp/id-not-ours`.
    pub const fn mpp(reason: Reason) -> Self {
        Self::new("mpp", reason)
    }

    /// A refusal in the `evm` namespace, e.g. `evm/field-malformed`.
    pub const fn evm(reason: Reason) -> Self {
        Self::new("evm", reason)
    }

    /// A refusal with no namespace, e.g. `bound-failed`.
    pub const fn bare(reason: Reason) -> Self {
        Self { namespace: None, reason }
    }

    /// The namespace, `None` for a bare refusal.
    pub const fn namespace(&self) -> Option<&'static str> {
        self.namespace
    }

    /// The reason.
    pub const fn reason(&self) -> Reason {
        self.reason
    }

    /// The code as the reference writes it: `<namespace>/<reason>`, or the bare reason.
    pub fn code(&self) -> String {
        self.to_string()
    }

    /// Whether the pairing has nothing for the buyer to sign ([`Reason::NoSignedPlace`] or
    /// [`Reason::NothingToSign`]).
    pub const fn is_nothing_to_sign(&self) -> bool {
        matches!(self.reason, Reason::NothingToSign | Reason::NoSignedPlace)
    }
}

impl fmt::Debug for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Refusal({self})")
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.namespace {
            Some(namespace) => write!(f, "{namespace}/{}", self.reason.as_str()),
            None => f.write_str(self.reason.as_str()),
        }
    }
}

#[cfg(test)]
mod tests;
