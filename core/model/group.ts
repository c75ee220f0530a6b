/** A group as the REST API shows it. */
export interface Group {
  id: string;
  name: string;
  description: string | null;
  devices: string[];
  creation: string;
  lastModified: string;
}
