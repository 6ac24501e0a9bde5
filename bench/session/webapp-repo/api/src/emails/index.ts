import type { ReactElement } from "react";
import { TaskAssigned } from "./TaskAssigned";
import { translator } from "./translate";

export interface RenderedEmail {
  subject: string;
  body: ReactElement;
}

type Template = (props: { locale: string } & Record<string, unknown>) => Promise<RenderedEmail>;

export const templates: Record<string, Template> = {
  task_assigned: async ({ locale, taskId, actorId }) => {
    const t = await translator(locale, "emails");
    return {
      subject: t("taskAssigned.subject"),
      body: TaskAssigned({ t, taskId: String(taskId), actorId: String(actorId) }),
    };
  },
};
