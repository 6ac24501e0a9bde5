import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { notificationSettings, updateNotificationSettings } from "@tandem/shared/schemas/settings";
import { requireUser } from "../auth/requireUser";
import * as notifications from "../services/notifications";
import * as onboarding from "../services/onboarding";

export const meRoutes: FastifyPluginAsyncZod = async (app) => {
  app.addHook("preHandler", requireUser);

  app.get(
    "/me/notification-settings",
    { schema: { response: { 200: notificationSettings } } },
    async (request) => notifications.getSettings(request.user.id),
  );

  app.patch(
    "/me/notification-settings",
    { schema: { body: updateNotificationSettings, response: { 200: notificationSettings } } },
    async (request) => notifications.updateSettings(request.user.id, request.body),
  );

  app.patch(
    "/me/onboarding",
    {
      schema: {
        body: z.object({ dismissed: z.boolean() }),
        response: { 200: z.object({ steps: z.array(z.string()), dismissed: z.boolean() }) },
      },
    },
    async (request) => onboarding.setDismissed(request.user.id, request.body.dismissed),
  );
};
