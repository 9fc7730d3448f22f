//! The XRPL definitions the decoder needs: the field codes named per type code, the transaction types, the
//! transaction results, the ledger entry types and the permission values, as the reference's codec lists them
//! (ripple-binary-codec's definitions). A field or enumeration value not listed here makes a blob malformed.

/// Type code: UInt16.
pub const UINT16: u8 = 1;
/// Type code: UInt32.
pub const UINT32: u8 = 2;
/// Type code: UInt64.
pub const UINT64: u8 = 3;
/// Type code: Hash128.
pub const HASH128: u8 = 4;
/// Type code: Hash256.
pub const HASH256: u8 = 5;
/// Type code: Amount.
pub const AMOUNT: u8 = 6;
/// Type code: Blob (variable length).
pub const BLOB: u8 = 7;
/// Type code: AccountID (variable length).
pub const ACCOUNT: u8 = 8;
/// Type code: Number.
pub const NUMBER: u8 = 9;
/// Type code: Int32.
pub const INT32: u8 = 10;
/// Type code: STObject.
pub const OBJECT: u8 = 14;
/// Type code: STArray.
pub const ARRAY: u8 = 15;
/// Type code: UInt8.
pub const UINT8: u8 = 16;
/// Type code: Hash160.
pub const HASH160: u8 = 17;
/// Type code: PathSet.
pub const PATHSET: u8 = 18;
/// Type code: Vector256 (variable length).
pub const VECTOR256: u8 = 19;
/// Type code: Hash192.
pub const HASH192: u8 = 21;
/// Type code: Issue.
pub const ISSUE: u8 = 24;
/// Type code: XChainBridge.
pub const BRIDGE: u8 = 25;
/// Type code: Currency.
pub const CURRENCY: u8 = 26;

/// A field: its type code and field code.
pub type Code = (u8, u8);

/// `TransactionType` (UInt16 2).
pub const TRANSACTION_TYPE: Code = (UINT16, 2);
/// `Flags` (UInt32 2).
pub const FLAGS: Code = (UINT32, 2);
/// `SourceTag` (UInt32 3).
pub const SOURCE_TAG: Code = (UINT32, 3);
/// `Sequence` (UInt32 4).
pub const SEQUENCE: Code = (UINT32, 4);
/// `DestinationTag` (UInt32 14).
pub const DESTINATION_TAG: Code = (UINT32, 14);
/// `LastLedgerSequence` (UInt32 27).
pub const LAST_LEDGER_SEQUENCE: Code = (UINT32, 27);
/// `CancelAfter` (UInt32 36).
pub const CANCEL_AFTER: Code = (UINT32, 36);
/// `SettleDelay` (UInt32 39).
pub const SETTLE_DELAY: Code = (UINT32, 39);
/// `TicketSequence` (UInt32 41).
pub const TICKET_SEQUENCE: Code = (UINT32, 41);
/// `NetworkID` (UInt32 1).
pub const NETWORK_ID: Code = (UINT32, 1);
/// `InvoiceID` (Hash256 17).
pub const INVOICE_ID: Code = (HASH256, 17);
/// `Channel` (Hash256 22).
pub const CHANNEL: Code = (HASH256, 22);
/// `Amount` (Amount 1).
pub const AMOUNT_FIELD: Code = (AMOUNT, 1);
/// `Balance` (Amount 2).
pub const BALANCE: Code = (AMOUNT, 2);
/// `Fee` (Amount 8).
pub const FEE: Code = (AMOUNT, 8);
/// `SendMax` (Amount 9).
pub const SEND_MAX: Code = (AMOUNT, 9);
/// `PublicKey` (Blob 1).
pub const PUBLIC_KEY: Code = (BLOB, 1);
/// `SigningPubKey` (Blob 3).
pub const SIGNING_PUB_KEY: Code = (BLOB, 3);
/// `TxnSignature` (Blob 4).
pub const TXN_SIGNATURE: Code = (BLOB, 4);
/// `Signature` (Blob 6).
pub const SIGNATURE: Code = (BLOB, 6);
/// `MemoType` (Blob 12).
pub const MEMO_TYPE: Code = (BLOB, 12);
/// `MemoData` (Blob 13).
pub const MEMO_DATA: Code = (BLOB, 13);
/// `MemoFormat` (Blob 14).
pub const MEMO_FORMAT: Code = (BLOB, 14);
/// `Account` (AccountID 1).
pub const ACCOUNT_FIELD: Code = (ACCOUNT, 1);
/// `Destination` (AccountID 3).
pub const DESTINATION: Code = (ACCOUNT, 3);
/// The object end marker (STObject 1).
pub const OBJECT_END: Code = (OBJECT, 1);
/// `Memo` (STObject 10).
pub const MEMO: Code = (OBJECT, 10);
/// The array end marker (STArray 1).
pub const ARRAY_END: Code = (ARRAY, 1);
/// `Signers` (STArray 3).
pub const SIGNERS: Code = (ARRAY, 3);
/// `Memos` (STArray 9).
pub const MEMOS: Code = (ARRAY, 9);

/// The field codes the XRPL definitions name, per type code, as inclusive ranges.
const KNOWN: &[(u8, &[(u8, u8)])] = &[
    (UINT16, &[(1, 6), (16, 16), (21, 22)]),
    (UINT32, &[(1, 44), (48, 48), (50, 80)]),
    (UINT64, &[(1, 13), (19, 33)]),
    (HASH128, &[(1, 1)]),
    (HASH256, &[(1, 14), (16, 19), (21, 29), (34, 41)]),
    (AMOUNT, &[(1, 13), (16, 19), (22, 34)]),
    (BLOB, &[(1, 14), (16, 21), (26, 46)]),
    (ACCOUNT, &[(1, 6), (8, 12), (18, 31)]),
    (NUMBER, &[(1, 17)]),
    (INT32, &[(1, 2)]),
    (OBJECT, &[(1, 13), (15, 16), (18, 19), (25, 38)]),
    (ARRAY, &[(1, 1), (3, 10), (12, 13), (16, 17), (21, 22), (24, 31)]),
    (UINT8, &[(1, 6), (16, 17), (19, 22)]),
    (HASH160, &[(1, 4)]),
    (PATHSET, &[(1, 1)]),
    (VECTOR256, &[(1, 5)]),
    (HASH192, &[(1, 4)]),
    (ISSUE, &[(1, 4)]),
    (BRIDGE, &[(1, 1)]),
    (CURRENCY, &[(1, 2)]),
];

fn within(ranges: &[(u8, u8)], value: u32) -> bool {
    ranges.iter().any(|(lo, hi)| (u32::from(*lo)..=u32::from(*hi)).contains(&value))
}

/// Whether the definitions name the field.
pub fn is_known(code: Code) -> bool {
    KNOWN.iter().find(|(t, _)| *t == code.0).is_some_and(|(_, ranges)| within(ranges, u32::from(code.1)))
}

/// The transaction types (UInt16 field 2's values) and their names.
const TRANSACTION_TYPES: &[(u16, &str)] = &[
    (0, "Payment"),
    (1, "EscrowCreate"),
    (2, "EscrowFinish"),
    (3, "AccountSet"),
    (4, "EscrowCancel"),
    (5, "SetRegularKey"),
    (7, "OfferCreate"),
    (8, "OfferCancel"),
    (10, "TicketCreate"),
    (12, "SignerListSet"),
    (13, "PaymentChannelCreate"),
    (14, "PaymentChannelFund"),
    (15, "PaymentChannelClaim"),
    (16, "CheckCreate"),
    (17, "CheckCash"),
    (18, "CheckCancel"),
    (19, "DepositPreauth"),
    (20, "TrustSet"),
    (21, "AccountDelete"),
    (25, "NFTokenMint"),
    (26, "NFTokenBurn"),
    (27, "NFTokenCreateOffer"),
    (28, "NFTokenCancelOffer"),
    (29, "NFTokenAcceptOffer"),
    (30, "Clawback"),
    (31, "AMMClawback"),
    (35, "AMMCreate"),
    (36, "AMMDeposit"),
    (37, "AMMWithdraw"),
    (38, "AMMVote"),
    (39, "AMMBid"),
    (40, "AMMDelete"),
    (41, "XChainCreateClaimID"),
    (42, "XChainCommit"),
    (43, "XChainClaim"),
    (44, "XChainAccountCreateCommit"),
    (45, "XChainAddClaimAttestation"),
    (46, "XChainAddAccountCreateAttestation"),
    (47, "XChainModifyBridge"),
    (48, "XChainCreateBridge"),
    (49, "DIDSet"),
    (50, "DIDDelete"),
    (51, "OracleSet"),
    (52, "OracleDelete"),
    (53, "LedgerStateFix"),
    (54, "MPTokenIssuanceCreate"),
    (55, "MPTokenIssuanceDestroy"),
    (56, "MPTokenIssuanceSet"),
    (57, "MPTokenAuthorize"),
    (58, "CredentialCreate"),
    (59, "CredentialAccept"),
    (60, "CredentialDelete"),
    (61, "NFTokenModify"),
    (62, "PermissionedDomainSet"),
    (63, "PermissionedDomainDelete"),
    (64, "DelegateSet"),
    (65, "VaultCreate"),
    (66, "VaultSet"),
    (67, "VaultDelete"),
    (68, "VaultDeposit"),
    (69, "VaultWithdraw"),
    (70, "VaultClawback"),
    (71, "Batch"),
    (74, "LoanBrokerSet"),
    (75, "LoanBrokerDelete"),
    (76, "LoanBrokerCoverDeposit"),
    (77, "LoanBrokerCoverWithdraw"),
    (78, "LoanBrokerCoverClawback"),
    (80, "LoanSet"),
    (81, "LoanDelete"),
    (82, "LoanManage"),
    (84, "LoanPay"),
    (85, "ConfidentialMPTConvert"),
    (86, "ConfidentialMPTMergeInbox"),
    (87, "ConfidentialMPTConvertBack"),
    (88, "ConfidentialMPTSend"),
    (89, "ConfidentialMPTClawback"),
    (90, "SponsorshipTransfer"),
    (91, "SponsorshipSet"),
    (100, "EnableAmendment"),
    (101, "SetFee"),
    (102, "UNLModify"),
];

/// The name of a transaction type, `None` for a value the definitions do not name.
pub fn transaction_type(value: u16) -> Option<&'static str> {
    TRANSACTION_TYPES.iter().find(|(v, _)| *v == value).map(|(_, name)| *name)
}

/// The value of a transaction type's name.
pub fn transaction_type_value(name: &str) -> Option<u16> {
    TRANSACTION_TYPES.iter().find(|(_, n)| *n == name).map(|(v, _)| *v)
}

/// `UNLModify`'s transaction type.
pub const UNL_MODIFY: u16 = 102;

/// Whether UInt8 field 3 (TransactionResult) names a result.
pub fn is_result(value: u8) -> bool {
    within(&[(0, 0), (100, 105), (121, 152), (154, 197), (199, 200)], u32::from(value))
}

/// Whether UInt16 field 1 (LedgerEntryType) names a ledger entry type.
pub fn is_ledger_entry_type(value: u16) -> bool {
    let ranges: &[(u8, u8)] = &[
        (55, 55),
        (67, 67),
        (73, 73),
        (78, 78),
        (80, 80),
        (83, 84),
        (97, 97),
        (100, 100),
        (102, 102),
        (104, 105),
        (111, 117),
        (120, 121),
        (126, 132),
        (136, 137),
        (144, 144),
    ];
    within(ranges, u32::from(value))
}

/// Whether UInt32 field 52 (PermissionValue) names a permission: a transaction type plus one, or a granular
/// permission (65537 to 65548).
pub fn is_permission(value: u32) -> bool {
    (65_537..=65_548).contains(&value)
        || value.checked_sub(1).and_then(|t| u16::try_from(t).ok()).and_then(transaction_type).is_some()
}
