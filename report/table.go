package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// PropertyTable writes the property table the way seedfall run prints it:
//
//	property                    seeds reached  seeds true  sometimes
//	recovery found a torn tail           1000         406  ok
//
// There is one block per property kind (always, sometimes, reachable, unreachable),
// with the kind heading the verdict column, and a blank line between blocks. Names are
// guest text: line breaks and other control characters print as spaces.
func PropertyTable(w io.Writer, props []Property) {
	if len(props) == 0 {
		return
	}
	props = sortedProperties(props)
	const (
		hName    = "property"
		hReached = "seeds reached"
		hHeld    = "seeds true"
	)
	nameW := utf8.RuneCountInString(hName)
	reachedW, heldW := len(hReached), len(hHeld)
	for _, p := range props {
		nameW = max(nameW, utf8.RuneCountInString(oneLine(p.Name)))
		reachedW = max(reachedW, len(fmt.Sprint(p.Reached)))
		heldW = max(heldW, len(fmt.Sprint(p.Held)))
	}
	var b strings.Builder
	pad := func(s string, w int) string {
		return s + strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s)))
	}
	for i, p := range props {
		if i == 0 || p.Kind != props[i-1].Kind {
			if i > 0 {
				b.WriteString("\n")
			}
			kind := p.Kind
			if kind == "" {
				kind = "verdict"
			}
			fmt.Fprintf(&b, "%s  %*s  %*s  %s\n", pad(hName, nameW), reachedW, hReached, heldW, hHeld, oneLine(kind))
		}
		fmt.Fprintf(&b, "%s  %*d  %*d  %s\n", pad(oneLine(p.Name), nameW), reachedW, p.Reached, heldW, p.Held, oneLine(p.verdict()))
	}
	io.WriteString(w, b.String())
}
