-- 0022: merchants pause, resume and amend subscriptions (issue 29). The
-- subscription keeps what was changed (models.Subscription.Plan, the
-- subscription.Plan as JSON; none when nothing was), and every change is
-- kept in order (models.SubscriptionChange).

ALTER TABLE subscriptions ADD COLUMN IF NOT EXISTS plan jsonb;

CREATE TABLE IF NOT EXISTS subscription_changes (
    recurring_id   varchar(32) NOT NULL,
    seq            bigint      NOT NULL,
    action         varchar(16) NOT NULL,
    status         bigint      NOT NULL,
    amount         bigint      NOT NULL,
    currency       varchar(3)  NOT NULL,
    next_charge_at timestamptz,
    at             timestamptz NOT NULL,
    CONSTRAINT subscription_changes_pkey PRIMARY KEY (recurring_id, seq)
);
