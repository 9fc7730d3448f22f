//! Every reason's code, as the reference writes it, and the refusals' own rules.

use std::collections::HashSet;

use super::{Reason, Refusal};

/// Every reason with the code it writes in a namespace, as the reference writes it.
const CODES: &[(Reason, &str)] = &[
    (Reason::NotV2, "x402/not-v2"),
    (Reason::OptionMalformed, "x402/option-malformed"),
    (Reason::NoPayableOption, "x402/no-payable-option"),
    (Reason::OptionNotInDocument, "x402/option-not-in-document"),
    (Reason::OptionNotThisPairing, "x402/option-not-this-pairing"),
    (Reason::ChoiceMalformed, "x402/choice-malformed"),
    (Reason::InputMissing, "x402/input-missing"),
    (Reason::InputMalformed, "x402/input-malformed"),
    (Reason::NoLegalContext, "x402/no-legal-context"),
    (Reason::LegalContextMalformed, "x402/legal-context-malformed"),
    (Reason::LegalContextConflict, "x402/legal-context-conflict"),
    (Reason::LinkNotHttps, "x402/link-not-https"),
    (Reason::PayloadMalformed, "x402/payload-malformed"),
    (Reason::SignatureMalformed, "x402/signature-malformed"),
    (Reason::NonceMalformed, "x402/nonce-malformed"),
    (Reason::NonceNotPayment, "x402/nonce-not-payment"),
    (Reason::SaltMalformed, "x402/salt-malformed"),
    (Reason::SaltNotBound, "x402/salt-not-bound"),
    (Reason::SpenderNotProxy, "x402/spender-not-proxy"),
    (Reason::PermissionContextMalformed, "x402/permission-context-malformed"),
    (Reason::ManagerNotReference, "x402/manager-not-reference"),
    (Reason::DelegationEmpty, "x402/delegation-empty"),
    (Reason::FacilitatorMissing, "x402/facilitator-missing"),
    (Reason::EscrowNotCanonical, "x402/escrow-not-canonical"),
    (Reason::FlowNotCarried, "x402/flow-not-carried"),
    (Reason::PaymentIdentifierUnwritable, "x402/payment-identifier-unwritable"),
    (Reason::DepositAboveMax, "x402/deposit-above-max"),
    (Reason::DepositAuthorization, "x402/deposit-authorization"),
    (Reason::NotAnOpening, "x402/not-an-opening"),
    (Reason::ChannelKindUnknown, "x402/channel-kind-unknown"),
    (Reason::ChannelIdMismatch, "x402/channel-id-mismatch"),
    (Reason::NetworkMalformed, "x402/network-malformed"),
    (Reason::FieldMalformed, "x402/field-malformed"),
    (Reason::NothingToSign, "x402/nothing-to-sign"),
    (Reason::NoSignedPlace, "x402/no-signed-place"),
    (Reason::NotBoundWithin, "x402/not-bound-within"),
    (Reason::BuildFailed, "x402/build-failed"),
    (Reason::MemberFailed, "x402/member-failed"),
    (Reason::BoundFailed, "x402/bound-failed"),
    (Reason::HeaderMalformed, "mpp/header-malformed"),
    (Reason::ChallengeMalformed, "mpp/challenge-malformed"),
    (Reason::IdNotOurs, "mpp/id-not-ours"),
    (Reason::RequestMalformed, "mpp/request-malformed"),
    (Reason::RequestNotJcs, "mpp/request-not-jcs"),
    (Reason::OpaqueMalformed, "mpp/opaque-malformed"),
    (Reason::OpaqueNotThisHash, "mpp/opaque-not-this-hash"),
    (Reason::CarrierTaken, "mpp/carrier-taken"),
    (Reason::CarrierOccupied, "mpp/carrier-occupied"),
    (Reason::CarrierNotChallenge, "mpp/carrier-not-challenge"),
    (Reason::ExpiresRequired, "mpp/expires-required"),
    (Reason::ChallengeExpired, "mpp/challenge-expired"),
    (Reason::NotThisPairing, "mpp/not-this-pairing"),
    (Reason::NetworkUnnamed, "mpp/network-unnamed"),
    (Reason::NetworkUndeclared, "svm/network-undeclared"),
    (Reason::NetworkMissing, "xrpl/network-missing"),
    (Reason::ChainIdUnnamed, "hedera/chain-id-unnamed"),
    (Reason::ChainIdRequired, "mpp/chain-id-required"),
    (Reason::EscrowMalformed, "mpp/escrow-malformed"),
    (Reason::SessionProtocol, "mpp/session-protocol"),
    (Reason::SessionAction, "mpp/session-action"),
    (Reason::ChannelNamed, "mpp/channel-named"),
    (Reason::ChannelNotBound, "mpp/channel-not-bound"),
    (Reason::CredentialMalformed, "mpp/credential-malformed"),
    (Reason::CredentialType, "mpp/credential-type"),
    (Reason::CredentialTypes, "mpp/credential-types"),
    (Reason::SplitsMalformed, "mpp/splits-malformed"),
    (Reason::ModesPullOnly, "mpp/modes-pull-only"),
    (Reason::MetadataMalformed, "mpp/metadata-malformed"),
    (Reason::UsdcProfile, "mpp/usdc-profile"),
    (Reason::AccessKeyMalformed, "mpp/access-key-malformed"),
    (Reason::AttributionMalformed, "mpp/attribution-malformed"),
    (Reason::AttributionMismatch, "mpp/attribution-mismatch"),
    (Reason::NonceNotChallengeHash, "mpp/nonce-not-challenge-hash"),
    (Reason::NonceNotChannel, "mpp/nonce-not-channel"),
    (Reason::NonceNotUsdcDerivation, "mpp/nonce-not-usdc-derivation"),
    (Reason::SaltNotThisHash, "mpp/salt-not-this-hash"),
    (Reason::SaltNotUsdcDerivation, "mpp/salt-not-usdc-derivation"),
    (Reason::WitnessNotChallengeHash, "mpp/witness-not-challenge-hash"),
    (Reason::GatewayUnread, "mpp/gateway-unread"),
    (Reason::SourceRequired, "mpp/source-required"),
    (Reason::StacksMemoNotH, "mpp/stacks-memo-not-h"),
    (Reason::StacksTxMalformed, "mpp/stacks-tx-malformed"),
    (Reason::WithinActionNotBuilt, "mpp/within-action-not-built"),
    (Reason::NotHashCredential, "near/not-hash-credential"),
    (Reason::MemoNotLcp, "near/memo-not-lcp"),
    (Reason::ResourceNotAllowed, "x402/resource-not-allowed"),
    (Reason::NetworkNotAllowed, "x402/network-not-allowed"),
    (Reason::AssetNotAllowed, "x402/asset-not-allowed"),
    (Reason::PayeeNotAllowed, "x402/payee-not-allowed"),
    (Reason::AmountAboveCap, "x402/amount-above-cap"),
    (Reason::BudgetExhausted, "x402/budget-exhausted"),
    (Reason::WindowTooLong, "x402/window-too-long"),
    (Reason::QuoteUnknown, "x402/quote-unknown"),
    (Reason::ApprovalChanged, "x402/approval-changed"),
    (Reason::ApprovalRequired, "x402/approval-required"),
    (Reason::SellerUnproven, "policy/seller-unproven"),
    (Reason::ProbationCap, "policy/probation-cap"),
    (Reason::AcceptanceRequired, "policy/acceptance-required"),
    (Reason::ApprovalDenied, "policy/approval-denied"),
    (Reason::Unavailable, "x402/unavailable"),
    (Reason::InFlight, "x402/in-flight"),
    (Reason::StateUnknown, "x402/state-unknown"),
    (Reason::KeyReused, "journal/key-reused"),
    (Reason::NonceUsed, "journal/nonce-used"),
    (Reason::NoOffer, "client/no-offer"),
    (Reason::AmountMalformed, "x402/amount-malformed"),
    (Reason::ChainMismatch, "x402/chain-mismatch"),
    (Reason::NonceMismatch, "x402/nonce-mismatch"),
    (Reason::CallMismatch, "x402/call-mismatch"),
    (Reason::TxMalformed, "svm/tx-malformed"),
    (Reason::TxTooLarge, "svm/tx-too-large"),
    (Reason::PdaNotFound, "svm/pda-not-found"),
    (Reason::MemoNotBound, "tempo/memo-not-bound"),
    (Reason::Ambiguous, "tempo/ambiguous"),
    (Reason::MemoCount, "svm/memo-count"),
    (Reason::NoChannelInstruction, "svm/no-channel-instruction"),
    (Reason::ChannelInstruction, "svm/channel-instruction"),
    (Reason::MemoNotUtf8, "svm/memo-not-utf8"),
    (Reason::CarrierNotCanonical, "svm/carrier-not-canonical"),
    (Reason::CarrierMismatch, "svm/carrier-mismatch"),
    (Reason::NoCarrier, "svm/no-carrier"),
    (Reason::BlobMalformed, "xrpl/blob-malformed"),
    (Reason::BlobTooLarge, "xrpl/blob-too-large"),
    (Reason::Multisigned, "xrpl/multisigned"),
    (Reason::NetworkMismatch, "xrpl/network-mismatch"),
    (Reason::NotPayment, "xrpl/not-payment"),
    (Reason::NoInvoiceId, "xrpl/no-invoice-id"),
    (Reason::CarrierNotLcp, "xrpl/carrier-not-lcp"),
    (Reason::MemosNotCarried, "xrpl/memos-not-carried"),
    (Reason::CurrencyNotXrp, "xrpl/currency-not-xrp"),
    (Reason::NotChannelCreate, "xrpl/not-channel-create"),
    (Reason::NoMemo, "xrpl/no-memo"),
    (Reason::ClaimAboveDeposit, "xrpl/claim-above-deposit"),
    (Reason::TxMismatch, "xrpl/tx-mismatch"),
    (Reason::BundleEmpty, "svm/bundle-empty"),
    (Reason::NonceAccountNotStatic, "svm/nonce-account-not-static"),
    (Reason::ReadFirst, "tempo/read-first"),
    (Reason::KeyAuthorizationMalformed, "tempo/key-authorization-malformed"),
    (Reason::NoWitness, "tempo/no-witness"),
    (Reason::WitnessNotBound, "tempo/witness-not-bound"),
    (Reason::KeyNotAuthorized, "tempo/key-not-authorized"),
    (Reason::OpenNotFound, "tempo/open-not-found"),
    (Reason::OpenAmbiguous, "tempo/open-ambiguous"),
    (Reason::DescriptorMismatch, "tempo/descriptor-mismatch"),
    (Reason::ChannelMismatch, "svm/channel-mismatch"),
    (Reason::ProofNotChallenge, "svm/proof-not-challenge"),
    (Reason::SignerNotOperator, "svm/signer-not-operator"),
    (Reason::InvoiceMalformed, "ln/invoice-malformed"),
    (Reason::InvoiceTooLarge, "ln/invoice-too-large"),
    (Reason::NoDescriptionHash, "ln/no-description-hash"),
    (Reason::NoMetadata, "ln/no-metadata"),
    (Reason::FieldRepeated, "ln/field-repeated"),
    (Reason::FieldLength, "ln/field-length"),
    (Reason::CurrencyNetwork, "ln/currency-network"),
    (Reason::RequestHashMismatch, "ln/request-hash-mismatch"),
    (Reason::RequestBindingMalformed, "ln/request-binding-malformed"),
    (Reason::RequestResourceMismatch, "ln/request-resource-mismatch"),
    (Reason::RequestServerMismatch, "ln/request-server-mismatch"),
    (Reason::RequestProfileMismatch, "ln/request-profile-mismatch"),
    (Reason::InvoiceNotNamed, "ln/invoice-not-named"),
    (Reason::PreimageMalformed, "ln/preimage-malformed"),
    (Reason::PaymentHashRequired, "ln/payment-hash-required"),
    (Reason::DescriptionPresent, "ln/description-present"),
    (Reason::DescriptionInline, "ln/description-inline"),
    (Reason::PaymentHashMismatch, "ln/payment-hash-mismatch"),
    (Reason::ExpiresAfterInvoice, "ln/expires-after-invoice"),
    (Reason::ReturnInvoiceMalformed, "ln/return-invoice-malformed"),
    (Reason::NoPaymentInAction, "ln/no-payment-in-action"),
    (Reason::AmountUnknown, "policy/amount-unknown"),
    (Reason::TooLarge, "card/too-large"),
    (Reason::TapSignatureInputMalformed, "card/tap-signature-input-malformed"),
    (Reason::TapSignatureMalformed, "card/tap-signature-malformed"),
    (Reason::TapNoPayerSignature, "card/tap-no-payer-signature"),
    (Reason::TapHashNotCovered, "card/tap-hash-not-covered"),
    (Reason::TapSignatureMissing, "card/tap-signature-missing"),
    (Reason::TapFieldMalformed, "card/tap-field-malformed"),
    (Reason::TapFieldMissing, "card/tap-field-missing"),
    (Reason::TapFieldRepeated, "card/tap-field-repeated"),
    (Reason::ViMalformed, "card/vi-malformed"),
    (Reason::ViTyp, "card/vi-typ"),
    (Reason::ViNoCheckoutMandate, "card/vi-no-checkout-mandate"),
    (Reason::ViCheckoutHashMismatch, "card/vi-checkout-hash-mismatch"),
    (Reason::ViTransactionIdMismatch, "card/vi-transaction-id-mismatch"),
    (Reason::ViLegalContextConflict, "card/vi-legal-context-conflict"),
    (Reason::ViKeyMalformed, "card/vi-key-malformed"),
    (Reason::ViSignatureInvalid, "card/vi-signature-invalid"),
    (Reason::ViKidMismatch, "card/vi-kid-mismatch"),
    (Reason::ViSdHashMismatch, "card/vi-sd-hash-mismatch"),
    (Reason::ViDisclosureUnreferenced, "card/vi-disclosure-unreferenced"),
    (Reason::SessionMalformed, "acp/session-malformed"),
    (Reason::IdNotHash, "acp/id-not-hash"),
    (Reason::HashNotSession, "acp/hash-not-session"),
    (Reason::AllowanceChanged, "acp/allowance-changed"),
    (Reason::AllowanceMalformed, "acp/allowance-malformed"),
    (Reason::NotBuyerSigned, "acp/not-buyer-signed"),
    (Reason::TokenMalformed, "ack/token-malformed"),
    (Reason::IdNotLcp, "ack/id-not-lcp"),
    (Reason::CheckoutMalformed, "ucp/checkout-malformed"),
    (Reason::Ap2NotActive, "ucp/ap2-not-active"),
    (Reason::HashNotInCheckout, "ucp/hash-not-in-checkout"),
    (Reason::JwsMalformed, "ap2/jws-malformed"),
    (Reason::MandateMalformed, "ap2/mandate-malformed"),
    (Reason::SdAlgUnsupported, "ap2/sd-alg-unsupported"),
    (Reason::DisclosureUnreferenced, "ap2/disclosure-unreferenced"),
    (Reason::CheckoutIdMissing, "ap2/checkout-id-missing"),
    (Reason::NoCheckoutMandate, "ap2/no-checkout-mandate"),
    (Reason::MandateAmbiguous, "ap2/mandate-ambiguous"),
    (Reason::CheckoutNotLatest, "ap2/checkout-not-latest"),
    (Reason::CheckoutHashMismatch, "ap2/checkout-hash-mismatch"),
    (Reason::NotOneTransfer, "stellar/not-one-transfer"),
    (Reason::NoAddressAuth, "stellar/no-address-auth"),
    (Reason::AssetMismatch, "stellar/asset-mismatch"),
    (Reason::AmountMismatch, "stellar/amount-mismatch"),
    (Reason::PayerMismatch, "stellar/payer-mismatch"),
];

#[test]
fn every_reason_writes_its_code_in_a_namespace() {
    assert_eq!(CODES.iter().map(|(r, _)| *r).collect::<Vec<_>>(), Reason::ALL);
    for (reason, code) in CODES {
        let (namespace, text) = code.split_once('/').unwrap();
        assert_eq!(text, reason.as_str());
        let refusal = Refusal::new(namespace, *reason);
        assert_eq!(refusal.code(), *code);
        assert_eq!(refusal.to_string(), *code);
        assert_eq!(format!("{refusal:?}"), format!("Refusal({code})"));
        assert_eq!((refusal.namespace(), refusal.reason()), (Some(namespace), *reason));
        assert_eq!(Refusal::x402(*reason).code(), format!("x402/{text}"));
        assert_eq!(Refusal::evm(*reason).code(), format!("evm/{text}"));
        assert_eq!(Refusal::mpp(*reason).code(), format!("mpp/{text}"));
        assert_eq!(Refusal::new("policy", *reason).code(), format!("policy/{text}"));
    }
}

#[test]
fn a_bare_refusal_writes_its_reason_alone() {
    assert_eq!(Refusal::bare(Reason::BoundFailed).code(), "bound-failed");
    assert_eq!(Refusal::bare(Reason::MemberFailed).code(), "member-failed");
    assert_eq!(format!("{:?}", Refusal::bare(Reason::BoundFailed)), "Refusal(bound-failed)");
    for reason in Reason::ALL {
        let bare = Refusal::bare(*reason);
        assert_eq!((bare.code(), bare.namespace()), (reason.as_str().to_owned(), None));
        assert_eq!(reason.to_string(), reason.as_str());
        assert_ne!(bare, Refusal::x402(*reason));
    }
}

#[test]
fn the_reasons_strings_are_distinct_kebab_words() {
    let strings: HashSet<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(strings.len(), Reason::ALL.len());
    for s in strings {
        assert!(!s.is_empty() && !s.starts_with('-') && !s.ends_with('-') && !s.contains("--"), "{s}");
        assert!(s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'), "{s}");
    }
}

#[test]
fn nothing_to_sign_is_decided_on_the_reason() {
    assert!(Refusal::x402(Reason::NothingToSign).is_nothing_to_sign());
    assert!(Refusal::new("card", Reason::NoSignedPlace).is_nothing_to_sign());
    let others = Reason::ALL.iter().filter(|r| !matches!(r, Reason::NothingToSign | Reason::NoSignedPlace));
    assert!(others.map(|r| Refusal::x402(*r)).all(|r| !r.is_nothing_to_sign()));
}

#[test]
fn the_seller_rules_codes_are_written_exactly() {
    assert_eq!(Refusal::new("policy", Reason::SellerUnproven).code(), "policy/seller-unproven");
    assert_eq!(Refusal::new("policy", Reason::ProbationCap).code(), "policy/probation-cap");
    assert_eq!(Reason::SellerUnproven.as_str(), "seller-unproven");
    assert_eq!(Reason::ProbationCap.as_str(), "probation-cap");
}
