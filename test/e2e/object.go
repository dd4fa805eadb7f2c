package main

// object is an unstructured Kubernetes object, as encoding/json decodes
// one: every number a float64 (see plain).
type object = map[string]any

// at reads the value at a path of an object.
func at(o object, path ...string) any {
	var cur any = o
	for _, p := range path {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	return cur
}

// str reads a string at a path of an object.
func str(o object, path ...string) string {
	s, _ := at(o, path...).(string)
	return s
}

// condition returns the status of an object's condition, or "".
func condition(o object, typ string) (status, reason, message string) {
	st, _ := o["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}
