import Prometheus

/// Webhook series of `/metrics`: `tidings_webhook_deliveries_total{hook, outcome}` (outcome:
/// delivered, failed, refused, gone) and `tidings_webhook_backlog{hook}`, the records waiting.
/// Hook names come from the operator's file (at most 64 of them), never from a request.
extension TidingsMetrics {
    func recordWebhookDelivery(hook: String, outcome: String) {
        guard outcome != "cancelled" else { return }
        registry.makeCounter(
            descriptor: Self.name("webhook_deliveries", unit: "total", help: "Webhook delivery attempts by hook and outcome."),
            labels: [("hook", hook), ("outcome", outcome)]
        ).increment()
    }

    func setWebhookBacklog(hook: String, count: Int) {
        registry.makeGauge(
            descriptor: Self.name("webhook_backlog", help: "Change records waiting to be delivered, by hook."),
            labels: [("hook", hook)]
        ).set(to: Double(count))
    }
}
