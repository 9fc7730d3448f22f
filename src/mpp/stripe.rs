//! `mpp/charge/stripe` and `mpp/subscription/stripe`: the seller places H in the PaymentIntent's (or the
//! subscription's) `metadata` (`legal_context`) beside the challenge's id and `opaque`; the buyer's Stripe shared
//! payment token signs nothing that carries it. Paid after an agreement payment, as [`super::card`]'s pairing is;
//! a subscription's renewals are not read.

use super::card::ConfirmOnly;
use super::methods;
use super::pieces::Piece;

/// The Stripe charge's id.
pub(crate) const CHARGE_ID: &str = "mpp/charge/stripe";
/// The Stripe charge.
pub(crate) static CHARGE: ConfirmOnly = ConfirmOnly::new(Piece::confirm_only(CHARGE_ID, &methods::STRIPE_CHARGE));

/// The Stripe subscription's id.
pub(crate) const SUBSCRIPTION_ID: &str = "mpp/subscription/stripe";
/// The Stripe subscription.
pub(crate) static SUBSCRIPTION: ConfirmOnly =
    ConfirmOnly::new(Piece::confirm_only(SUBSCRIPTION_ID, &methods::STRIPE_SUBSCRIPTION));
