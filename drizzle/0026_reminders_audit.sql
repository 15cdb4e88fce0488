-- The reminders' tables join the event log: consent records as consent_record.created, the standing
-- consent's changes as consent.granted / consent.withdrawn, rules as reminder_rule.*, and a
-- message's end as reminder.sent / reminder.failed / reminder.suppressed (delivery and read
-- receipts as reminder.delivered / reminder.read). A dispatcher's claim (lease, attempt count, next
-- try, last error) is bookkeeping, not a change.
SELECT audit_attach('consent_records', 'consent_record');
--> statement-breakpoint
SELECT audit_attach('tutor_consents', 'consent', '{"granted": "granted", "withdrawn": "withdrawn"}');
--> statement-breakpoint
SELECT audit_attach('reminder_rules', 'reminder_rule');
--> statement-breakpoint
SELECT audit_attach('reminder_messages', 'reminder', '{"sent": "sent", "failed": "failed", "suppressed": "suppressed", "delivered": "delivered", "read": "read"}', ARRAY['claimed_until', 'attempts', 'send_at', 'last_error']);
