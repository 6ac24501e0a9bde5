import { render } from "@react-email/components";
import { ServerClient } from "postmark";
import type { Job } from "bullmq";
import { config } from "../config";
import { prisma } from "../db";
import { log } from "../log";
import { templates } from "../emails";
import type { JobPayloads } from "./queue";

const postmark = new ServerClient(config.POSTMARK_SERVER_TOKEN);

export async function sendEmail(job: Job<JobPayloads["send-email"]>): Promise<void> {
  const { template, userId, payload } = job.data;
  const user = await prisma.user.findUnique({ where: { id: userId }, select: { email: true, locale: true } });
  if (!user) {
    log.info({ userId, template }, "email skipped: user gone");
    return;
  }

  const email = await templates[template]({ locale: user.locale, ...payload });
  const html = await render(email.body);
  await postmark.sendEmail({
    From: config.EMAIL_FROM,
    To: user.email,
    Subject: email.subject,
    HtmlBody: html,
    MessageStream: template === "weekly_digest" ? "broadcast" : "outbound",
    Headers: [{ Name: "X-Job-Id", Value: String(job.id) }],
  });
  log.info({ userId, template, jobId: job.id }, "email sent");
}
